-- Observer: everything needed to observe one node, in one round trip.
-- KEYS: 1 stack, 2 res, 3 graph.  ARGV: 1 node, 2 traversal
-- Returns {traversal, stack status, record(flat), graph entry}, or
-- {'NONODE'} for a node the graph of the job's traversal, in progress, does
-- not have: a forged or corrupt job, which must neither act nor count as
-- done (the caller dead-letters it).
local st = redis.call('HMGET', KEYS[1], 'traversal', 'status')
local entry = redis.call('HGET', KEYS[3], ARGV[1])
if not entry and st[1] == ARGV[2] and ends_with(st[2], '_IN_PROGRESS') then return {'NONODE'} end
return {st[1] or '', st[2] or '', redis.call('HGETALL', KEYS[2]), entry or ''}
