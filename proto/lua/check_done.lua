-- Engine: an action whose resource settled at once, recorded and its node
-- done in one step. When the type's look right after its action says
-- COMPLETE (OS::Heat::None, OS::Heat::Value, OS::Heat::RandomString, ...:
-- cv_check_settled), no observer needs to look: this writes what
-- check_finish.lua and then node_done.lua would have written, both events
-- included, fenced by the record version read under the lease, and
-- releases the lease.
-- KEYS: 1 stack, 2 res, 3 lease, 4 events, 5 counts, 6 index, 7 ledger,
--       8 done, 9 publishing
-- ARGV: 1 traversal, 2 node, 3 resource, 4 version, 5 token, 6 worker,
--       7 action, 8 reason, 9 status, 10 done_reason, 11 physical_id,
--       12 uuid, 13 type, 14 props, 15 attrs, 16 data, 17 dependencies,
--       18 policy, 19 old, 20 events, 21 pass
-- Variadic: KEYS from 10 are the successors' sync points, ARGV from 22
-- their node names, in the same order (as node_done.lua).
-- version: read under the lease; token: the lease's; reason: of the
-- IN_PROGRESS event; status: the resource's once settled
-- (<ACTION>_COMPLETE); done_reason: of the COMPLETE event and the record;
-- attrs, data: as the look left them; dependencies: json ('' = keep the
-- index entry); old: replaced versions json ('' = keep); events: extra
-- events of the action, a json list of {"physical_id", "action",
-- "status", "reason"} ('' = none); pass: data passed to the successors.
-- The node joins the publishing set (node_done.lua's publishing '1'): the
-- caller has no other job that would publish its successors again (or end
-- the traversal: a node without successors joins only when it is the last).
-- Returns node_done.lua's answers: {'OK', added, done, total, a1, n1, d1,
-- ...}, STALE or SETTLED (the record is written, as check_finish.lua
-- would have), or {'FENCED', current version} (nothing written).
local function release()
  if redis.call('GET', KEYS[3]) == ARGV[5] then redis.call('DEL', KEYS[3]) end
end
local cur = redis.call('HMGET', KEYS[2], 'version', 'status')
local ver = tonumber(cur[1] or '0')
if ver ~= tonumber(ARGV[4]) then
  release()
  return {'FENCED', tostring(ver)}
end
local extra = ARGV[20] ~= '' and cjson.decode(ARGV[20]) or {}
local t, t_us = now_strs()
if ARGV[7] == 'CREATE' and ARGV[12] ~= '' then
  redis.call('HINCRBY', KEYS[7], 'create:' .. ARGV[12], 1)
end
-- set_status's count, with the status read above and written below.
if cur[2] ~= ARGV[9] then
  if cur[2] and redis.call('HINCRBY', KEYS[5], cur[2], -1) <= 0 then
    redis.call('HDEL', KEYS[5], cur[2])
  end
  redis.call('HINCRBY', KEYS[5], ARGV[9], 1)
end
redis.call('HSET', KEYS[2], 'status', ARGV[9], 'version', ver + 1, 'updated', t, 'worker', ARGV[6],
  'action', ARGV[7], 'reason', ARGV[10], 'physical_id', ARGV[11], 'uuid', ARGV[12],
  'type', ARGV[13], 'props', ARGV[14], 'attrs', ARGV[15], 'data', ARGV[16],
  'traversal', ARGV[1], 'started', t_us, 'policy', ARGV[18])
if ARGV[19] ~= '' then redis.call('HSET', KEYS[2], 'old', ARGV[19]) end
if ARGV[17] ~= '' then redis.call('HSET', KEYS[6], ARGV[3], ARGV[17]) end
add_event(KEYS[4], ARGV[3], ARGV[11], ARGV[7], 'IN_PROGRESS', ARGV[8], ARGV[1], ARGV[6], t)
for _, e in ipairs(extra) do
  add_event(KEYS[4], ARGV[3], e.physical_id, e.action, e.status, e.reason, ARGV[1], ARGV[6], t)
end
add_event(KEYS[4], ARGV[3], ARGV[11], ARGV[7], 'COMPLETE', ARGV[10], ARGV[1], ARGV[6], t)
release()
local st = redis.call('HMGET', KEYS[1], 'traversal', 'status', 'total', 'progress')
if not st[1] and not st[2] then return {'STALE', ''} end
-- The reaper's sign of life, kept to a tenth of a second: thousands of
-- resources a second need not each rewrite it.
if not tonumber(st[4]) or tonumber(t) - tonumber(st[4]) >= 0.1 then
  redis.call('HSET', KEYS[1], 'progress', t)
end
if st[1] ~= ARGV[1] then return {'STALE', st[1]} end
if not ends_with(st[2], '_IN_PROGRESS') then return {'SETTLED', st[2] or ''} end
return mark_done(KEYS[1], KEYS[8], KEYS[9], ARGV[2], ARGV[21], true, tonumber(st[3]), 22)
