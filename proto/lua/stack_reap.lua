-- Reaper: what a stalled stack needs re-queued. A stack is stalled when it
-- is in progress and nothing moved (`progress`, `updated`) for longer than
-- the threshold: then whatever job should be under way was lost or its
-- worker died, and publishing it again is safe because every handler is
-- idempotent.
-- KEYS: 1 stack. The traversal's keys (graph, done, sync points, records)
-- are named here from KEYS[1]: they share its hash tag {<stack id>}, so the
-- script stays in one Redis Cluster slot.
-- ARGV: 1 stall threshold ms, 2 traversal ('' on the first call of a pass,
--       which checks the stall), 3 HSCAN cursor of the graph, 4 entries per
--       call, 5 most jobs to return
-- Returns one of
--   {'IDLE', why}            nothing to do: GONE (no such stack), SETTLED
--                            (not in progress), MOVING (not stalled, or on
--                            to another traversal)
--   {'STACK', trav, action}  the traversal was never expanded: its STACK job
--   {'FINISH', trav}         every node is done but the stack did not end
--   {'NODES', cursor, trav, stalled seconds, kind, node, version, ...}
--       ready nodes not done: ('CHECK', node, '') or, for an update whose
--       action of this traversal is recorded in progress, ('OBSERVE', node,
--       record version); cursor '0' when the graph has been scanned.
-- The first call of a pass moves `progress` and sets `reaped`, so the same
-- stall is not reaped again before another threshold has passed.
local base = string.sub(KEYS[1], 1, #KEYS[1] - #'stack')
local st = redis.call('HMGET', KEYS[1], 'status', 'traversal', 'expanded', 'total', 'done',
  'action', 'progress', 'updated')
if not st[1] then return {'IDLE', 'GONE'} end
if not ends_with(st[1], '_IN_PROGRESS') then return {'IDLE', 'SETTLED'} end
local trav = st[2]
local stalled = 0
if ARGV[2] == '' then
  local t = redis.call('TIME')
  local now = tonumber(t[1]) + tonumber(t[2]) / 1e6
  local last = math.max(tonumber(st[7] or '0') or 0, tonumber(st[8] or '0') or 0)
  stalled = now - last
  if stalled * 1000 < tonumber(ARGV[1]) then return {'IDLE', 'MOVING'} end
  local ts = now_str()
  redis.call('HSET', KEYS[1], 'progress', ts, 'reaped', ts)
elseif ARGV[2] ~= trav then
  return {'IDLE', 'MOVING'}
end
if st[3] ~= trav then return {'STACK', trav, st[6] or ''} end
if tonumber(st[5] or '0') >= tonumber(st[4] or '0') then return {'FINISH', trav} end

local done = base .. 'done:' .. trav
local scan = redis.call('HSCAN', base .. 'graph:' .. trav, ARGV[3], 'COUNT', ARGV[4])
local out = {'NODES', scan[1], trav, tostring(math.floor(stalled))}
local entries, room = scan[2], tonumber(ARGV[5])
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
  if preds and redis.call('SISMEMBER', done, node) == 0 and
      (preds == 0 or redis.call('HLEN', base .. 'sp:' .. trav .. ':' .. node) >= preds) then
    local rec = redis.call('HMGET', base .. 'res:' .. string.sub(node, 3), 'status', 'traversal',
      'version')
    if string.sub(node, 1, 2) == 'u/' and ends_with(rec[1], '_IN_PROGRESS') and rec[2] == trav then
      add('OBSERVE', node, rec[3])
    else
      add('CHECK', node, '')
    end
  end
end
return out
