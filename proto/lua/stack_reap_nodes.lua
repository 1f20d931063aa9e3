-- Reaper: one batch of the ready nodes of a stalled traversal that are not
-- done (stack_reap.lua said the stack stalled on it).
-- KEYS: 1 stack, 2 graph, 3 done, 4 hooks
-- ARGV: 1 traversal, 2 cursor, 3 count, 4 room, 5 sp_prefix, 6 res_prefix
-- graph and done are the traversal's; cursor is the graph's HSCAN cursor
-- ('0' first), count the entries to look at, room the most nodes to return.
-- sp_prefix and res_prefix are key prefixes made by cv_keys (cv_key_prefix
-- of CV_KEY_SP for the traversal, of CV_KEY_RES): a node name appended names
-- the node's sync point, a resource name its record. They share the stack's
-- hash tag, so the script stays in one Redis Cluster slot.
-- A node paused on a hook of this traversal (its resource's entry in the
-- stack's hooks hash, hook_wait.lua) is not stalled but waits for a user:
-- its job would only find it waiting again, so it is left alone. Once the
-- hook is cleared (`waiting` gone) the node is re-queued like any other,
-- should the job hook_clear's caller published be lost.
-- A batch that re-queues nodes sets the stack's `reaped`.
-- Returns one of
--   {'GONE'}, {'SETTLED'}, {'MOVING'} (on to another traversal): nothing to do
--   {'STACK', trav, action}, {'FINISH', trav}: as stack_reap.lua
--   {'NODES', cursor, kind, node, version, ...}
--       ready nodes not done: ('CHECK', node, '') or, for an update whose
--       action of this traversal is recorded in progress, ('OBSERVE', node,
--       record version); cursor '0' when the graph has been scanned.
local st = redis.call('HMGET', KEYS[1], 'status', 'traversal', 'expanded', 'total', 'done',
  'action')
if not st[1] then return {'GONE'} end
if not ends_with(st[1], '_IN_PROGRESS') then return {'SETTLED'} end
local trav = st[2]
if ARGV[1] ~= trav then return {'MOVING'} end
if st[3] ~= trav then return {'STACK', trav, st[6] or ''} end
if tonumber(st[5] or '0') >= tonumber(st[4] or '0') then return {'FINISH', trav} end

local scan = redis.call('HSCAN', KEYS[2], ARGV[2], 'COUNT', ARGV[3])
local out = {'NODES', scan[1]}
local entries, room = scan[2], tonumber(ARGV[4])
local function paused_on_hook(node)
  local raw = redis.call('HGET', KEYS[4], string.sub(node, 3))
  if not raw then return false end
  local ok, h = pcall(cjson.decode, raw)
  return ok and type(h) == 'table' and h.waiting ~= nil and tostring(h.traversal) == trav and
    h.node == node
end
local function add(kind, node, version)
  out[#out + 1] = kind
  out[#out + 1] = node
  out[#out + 1] = version
  room = room - 1
end
for i = 1, #entries, 2 do
  if room <= 0 then break end
  local node = entries[i]
  local ok, e = pcall(cjson.decode, entries[i + 1])
  -- "p": the node's number of predecessors (entries without it are skipped:
  -- a node must never run before its parents).
  local preds = ok and type(e) == 'table' and tonumber(e.p)
  if preds and redis.call('SISMEMBER', KEYS[3], node) == 0 and
      (preds == 0 or redis.call('HLEN', ARGV[5] .. node) >= preds) and
      not paused_on_hook(node) then
    local rec = redis.call('HMGET', ARGV[6] .. string.sub(node, 3), 'status', 'traversal',
      'version')
    if string.sub(node, 1, 2) == 'u/' and ends_with(rec[1], '_IN_PROGRESS') and rec[2] == trav then
      add('OBSERVE', node, rec[3])
    else
      add('CHECK', node, '')
    end
  end
end
if #out > 2 then redis.call('HSET', KEYS[1], 'reaped', now_str()) end
return out
