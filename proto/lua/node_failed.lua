-- Records a failed action on a resource and fails the traversal: the stack
-- becomes <ACTION>_FAILED with a reason naming the resource, and no new
-- action starts for this traversal (actions under way finish and are recorded).
-- A stack that asks for a rollback of a failed create or update begins the
-- ROLLBACK traversal in the same step (begin_traversal, lib.lua), so no
-- worker dying in between can leave it failed for good: the caller then
-- only publishes its STACK job, which the reaper re-queues should it be lost.
-- KEYS: 1 stack, 2 res, 3 events, 4 counts, 5 def
-- ARGV: 1 traversal, 2 version, 3 status, 4 reason, 5 worker, 6 resource,
--       7 physical_id, 8 action, 9 stack_reason
-- version: expected ('' = any); status: the resource's ('' = the record
-- keeps its status: an action refused before it began, e.g. restricted by
-- the environment; only the event is recorded); reason: the resource's;
-- stack_reason: the stack's.
-- Returns {'OK'}, or {'ROLLBACK', traversal} (failed, and the rollback
-- traversal begun), or FENCED / STALE / SETTLED.
-- The failed traversal joins the stack's `gc` set (lib.lua
-- retire_traversal; begin_traversal does it for a rollback): its keys are
-- garbage, and its jobs still under way answer SETTLED or STALE.
-- A stack that is gone (purged: docs/keyspace.md) gets nothing back, not
-- even a record or an event of a late job.
if redis.call('EXISTS', KEYS[1]) == 0 then return {'STALE', ''} end
if ARGV[2] ~= '' then
  local ver = redis.call('HGET', KEYS[2], 'version')
  if (ver or '0') ~= ARGV[2] then return {'FENCED', ver or '0'} end
end
local t = now_str()
local rtype = declared_type(KEYS[2])
if ARGV[3] == '' then
  add_event(KEYS[3], ARGV[6], ARGV[7], ARGV[8], 'FAILED', ARGV[4], ARGV[1], ARGV[5], t, rtype)
elseif set_status(KEYS[2], KEYS[4], ARGV[3]) then
  redis.call('HSET', KEYS[2], 'reason', ARGV[4], 'updated', t)
  add_event(KEYS[3], ARGV[6], ARGV[7], ARGV[8], 'FAILED', ARGV[4], ARGV[1], ARGV[5], t, rtype)
end
local st = redis.call('HMGET', KEYS[1], 'traversal', 'status', 'action', 'name', 'id', 'rollback')
if st[1] ~= ARGV[1] then return {'STALE', st[1] or ''} end
if not ends_with(st[2], '_IN_PROGRESS') then return {'SETTLED', st[2]} end
redis.call('HSET', KEYS[1], 'status', st[3] .. '_FAILED', 'reason', ARGV[9], 'updated', t)
add_event(KEYS[3], st[4], st[5], st[3], 'FAILED', ARGV[9], ARGV[1], ARGV[5], t, STACK_TYPE)
if st[6] == '1' and (st[3] == 'CREATE' or st[3] == 'UPDATE') then
  return {'ROLLBACK', begin_traversal(KEYS[1], KEYS[5], KEYS[3], 'ROLLBACK', ARGV[5], t, false)}
end
retire_traversal(KEYS[1], ARGV[1])
return {'OK'}
