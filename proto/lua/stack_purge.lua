-- Purges a deleted stack: every key of it goes at once, as heat-manage
-- purge_deleted removes a deleted stack's rows. Only a stack whose status
-- is DELETE_COMPLETE for at least `age` seconds (Redis' clock, from its
-- `updated`) is purged: a stack in progress, live, or given a new
-- traversal since its delete is never touched, and neither is one whose
-- resources' leases are held (an action of an older job still under way).
-- One script, so a reader sees the stack whole or gone, never half purged;
-- the `stack` key goes with the rest, so a purge never leaves keys nobody
-- could find again. Big keys (ledger, events, definition) are unlinked:
-- Redis frees them off its main thread.
-- The traversals listed in `gc` are swept first (traversal_sweep.lua, in
-- bounded batches): AGAIN until they are.
-- KEYS: 1 stack, 2 def, 3 gc
-- ARGV: 1 age, 2 stack_prefix
-- age: seconds since the delete completed, at least; stack_prefix:
-- '<prefix>{<stack>}:' (cv_keys.h).
-- Returns {'OK', name, parent, seconds since the delete}, {'GONE'} (no
-- such stack: purged already), {'LIVE', status} (not DELETE_COMPLETE),
-- {'YOUNG', seconds still to wait}, {'AGAIN'} (sweep its traversals
-- first) or {'BUSY', resource} (a lease of it is held).
local st = redis.call('HMGET', KEYS[1], 'status', 'updated', 'name', 'parent', 'traversal')
if not st[1] then return {'GONE'} end
if st[1] ~= 'DELETE_COMPLETE' then return {'LIVE', st[1]} end
local t = redis.call('TIME')
local since = tonumber(t[1]) + tonumber(t[2]) / 1e6 - (tonumber(st[2] or '0') or 0)
if since < tonumber(ARGV[1]) then
  return {'YOUNG', tostring(math.ceil(tonumber(ARGV[1]) - since))}
end
if redis.call('SCARD', KEYS[3]) > 0 then return {'AGAIN'} end
local p = ARGV[2]
-- The resources this stack has known: its definitions' and any with a
-- record, a hook or an index entry left (none, after a complete delete).
local names = {}
local defs = redis.call('HMGET', KEYS[2], 'template', 'complete_template')
for _, text in ipairs(defs) do
  local ok, tpl = pcall(cjson.decode, text or '')
  if ok and type(tpl) == 'table' and type(tpl.resources) == 'table' then
    for name, _ in pairs(tpl.resources) do names[name] = true end
  end
end
for _, key in ipairs({'hooks', 'index'}) do
  for _, name in ipairs(redis.call('HKEYS', p .. key)) do names[name] = true end
end
for name, _ in pairs(names) do
  if redis.call('EXISTS', p .. 'lease:' .. name) == 1 then return {'BUSY', name} end
end
local keys = {}
for _, kind in ipairs({'def', 'events', 'counts', 'index', 'ledger', 'children', 'hooks', 'gc'}) do
  keys[#keys + 1] = p .. kind
end
local trav = st[5] or '0'
for _, kind in ipairs({'rdef:', 'graph:', 'done:', 'publishing:'}) do
  keys[#keys + 1] = p .. kind .. trav
end
for name, _ in pairs(names) do
  for _, kind in ipairs({'res:', 'signals:', 'waiters:'}) do
    keys[#keys + 1] = p .. kind .. name
  end
end
for i = 1, #keys, 1000 do
  redis.call('UNLINK', unpack(keys, i, math.min(i + 999, #keys)))
end
redis.call('UNLINK', KEYS[1])
return {'OK', st[3] or '', st[4] or '', tostring(math.floor(since))}
