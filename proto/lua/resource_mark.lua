-- convergectl mark-unhealthy: Heat's resource mark-unhealthy. The resource
-- becomes CHECK_FAILED (the next traversal replaces it); with reset, a
-- CHECK_FAILED one becomes CHECK_COMPLETE again. A create or update in
-- flight is abandoned at once: the version moves on, so its observer stops
-- (STALE) and a traversal waiting for it checks the node again.
-- KEYS: 1 res, 2 lease, 3 events, 4 counts, 5 stack
-- ARGV: 1 mark ('1' unhealthy, '0' reset), 2 reason, 3 client, 4 resource
-- Returns {'OK', status, observe_traversal, version}: the status after
-- (unchanged when there was nothing to do); when the action abandoned was
-- the current traversal's own, that traversal and the new record version,
-- for an OBSERVE job that fails its node at once (else ''); or NONE (no such resource), BUSY (an engine holds its lease for
-- the few milliseconds of an action: try again), DELETING (a resource
-- being deleted is not marked, as in Heat).
local rec = redis.call('HMGET', KEYS[1], 'status', 'action', 'physical_id', 'traversal')
if not rec[1] then return {'NONE'} end
if redis.call('EXISTS', KEYS[2]) == 1 then return {'BUSY'} end
if rec[2] == 'DELETE' then return {'DELETING'} end
local status
if ARGV[1] == '1' then
  status = 'CHECK_FAILED'
elseif rec[1] == 'CHECK_FAILED' then
  status = 'CHECK_COMPLETE'
else
  return {'OK', rec[1], '', ''}
end
local observe = ''
if rec[1] ~= status then
  local st = redis.call('HMGET', KEYS[5], 'traversal', 'status')
  if ARGV[1] == '1' and st[1] == rec[4] and ends_with(st[2], '_IN_PROGRESS') and
      ends_with(rec[1], '_IN_PROGRESS') then
    observe = st[1]
  end
  local t = now_str()
  set_status(KEYS[1], KEYS[4], status)
  redis.call('HINCRBY', KEYS[1], 'version', 1)
  redis.call('HSET', KEYS[1], 'action', 'CHECK', 'reason', ARGV[2], 'updated', t)
  add_event(KEYS[3], ARGV[4], rec[3], 'CHECK', string.sub(status, 7), ARGV[2], rec[4] or '',
    ARGV[3], t, declared_type(KEYS[1]))
  touch_progress(KEYS[5], t)
end
return {'OK', status, observe, redis.call('HGET', KEYS[1], 'version') or ''}
