-- Records that the traversal graph of a stack has been written, with the
-- parameters as the template resolved them (defaults applied, typed): what
-- every check job of the traversal reads. A nested stack's definition holds
-- its parent's property values until then.
-- KEYS: 1 stack, 2 def.  ARGV: 1 traversal, 2 number of graph nodes,
-- 3 resolved parameters json
-- Returns {'OK'} or {'STALE'} when a newer traversal started meanwhile.
local st = redis.call('HMGET', KEYS[1], 'traversal', 'status')
if st[1] ~= ARGV[1] then return {'STALE'} end
if not ends_with(st[2], '_IN_PROGRESS') then return {'SETTLED'} end
redis.call('HSET', KEYS[2], 'params', ARGV[3])
redis.call('HSET', KEYS[1], 'total', ARGV[2], 'expanded', ARGV[1], 'progress', now_str())
return {'OK'}
