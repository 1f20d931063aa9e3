-- Engine: writes a Converge::Service's spec into the cluster, or marks the
-- service deleting, before the live engine reconciles it. Idempotent: a
-- retried create or update with the same spec changes nothing (gen stays),
-- so a redelivered CHECK job neither bumps the generation nor re-places.
-- KEYS: 1 svc, 2 services
-- ARGV: 1 svc_id, 2 spec, 3 state, 4 stack, 5 stack_name, 6 resource
-- svc_id: the service id (a member of the services set); spec: the service
-- spec JSON (state active) or '' (deleting keeps the spec); state: active
-- or deleting.
-- Returns {'OK', gen}, or {'NONE'} when a service to delete does not exist.
local cur = redis.call('HMGET', KEYS[1], 'state', 'spec', 'gen')
if ARGV[3] == 'deleting' then
  if not cur[1] then return {'NONE'} end
  if cur[1] == 'deleting' then return {'OK', cur[3] or '0'} end
  redis.call('HSET', KEYS[1], 'state', 'deleting')
  return {'OK', tostring(redis.call('HINCRBY', KEYS[1], 'gen', 1))}
end
if cur[1] == ARGV[3] and cur[2] == ARGV[2] then
  redis.call('SADD', KEYS[2], ARGV[1])
  return {'OK', cur[3] or '0'}
end
redis.call('HSET', KEYS[1], 'spec', ARGV[2], 'state', ARGV[3], 'stack', ARGV[4],
  'stack_name', ARGV[5], 'resource', ARGV[6])
redis.call('SADD', KEYS[2], ARGV[1])
return {'OK', tostring(redis.call('HINCRBY', KEYS[1], 'gen', 1))}
