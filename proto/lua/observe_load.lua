-- Observer: everything needed to observe one node, in one round trip.
-- KEYS: 1 stack, 2 res, 3 graph.  ARGV: 1 node
-- Returns {traversal, stack status, record(flat), graph entry}.
local st = redis.call('HMGET', KEYS[1], 'traversal', 'status')
return {st[1] or '', st[2] or '', redis.call('HGETALL', KEYS[2]),
  redis.call('HGET', KEYS[3], ARGV[1]) or ''}
