-- Observer: everything needed to observe one node, in one round trip.
-- KEYS: 1 stack, 2 res, 3 graph
-- ARGV: 1 node, 2 traversal
-- Returns {traversal, stack status, record(flat), graph entry}, or
-- {'NONODE'} for a node outside the graph (lib.lua outside_graph): the caller
-- dead-letters the job.
if outside_graph(KEYS[1], KEYS[3], ARGV[1], ARGV[2]) then return {'NONODE'} end
local st = redis.call('HMGET', KEYS[1], 'traversal', 'status')
return {st[1] or '', st[2] or '', redis.call('HGETALL', KEYS[2]),
  redis.call('HGET', KEYS[3], ARGV[1]) or ''}
