-- Engine: take the lease of a resource for one graph node and load all that
-- the action needs, in one round trip.
-- KEYS: 1 stack, 2 res, 3 lease, 4 rdef, 5 sync point, 6 done set, 7 def, 8 graph
-- ARGV: 1 traversal, 2 node, 3 lease token, 4 lease ms, 5 resource name
-- Returns {'OK', rdef, params, record(flat), syncpoint(flat), graph entry,
-- stack name} or a reason
-- not to act: STALE (superseded), SETTLED (stack not in progress, e.g.
-- FAILED), DONE (node already done), BUSY (leased; with its PTTL).
local st = redis.call('HMGET', KEYS[1], 'traversal', 'status', 'name')
if st[1] ~= ARGV[1] then return {'STALE', st[1] or ''} end
if not ends_with(st[2], '_IN_PROGRESS') then return {'SETTLED', st[2] or ''} end
if redis.call('SISMEMBER', KEYS[6], ARGV[2]) == 1 then return {'DONE'} end
-- Re-entrant for the same token: a job retrying after a transient error
-- keeps its lease instead of waiting for it to expire.
local holder = redis.call('GET', KEYS[3])
if holder and holder ~= ARGV[3] then
  return {'BUSY', tostring(redis.call('PTTL', KEYS[3]))}
end
redis.call('SET', KEYS[3], ARGV[3], 'PX', ARGV[4])
local rdef = redis.call('HGET', KEYS[4], ARGV[5]) or ''
local params = redis.call('HGET', KEYS[7], 'params') or '{}'
return {'OK', rdef, params, redis.call('HGETALL', KEYS[2]), redis.call('HGETALL', KEYS[5]),
  redis.call('HGET', KEYS[8], ARGV[2]) or '', st[3] or ''}
