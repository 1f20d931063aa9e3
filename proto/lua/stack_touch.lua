-- Observer: an action of this traversal is still being watched, so the stack
-- is not stalled (its progress time moves) although no node finished.
-- KEYS: 1 stack
-- ARGV: 1 traversal
-- Returns 1 if touched.
if redis.call('HGET', KEYS[1], 'traversal') ~= ARGV[1] then return 0 end
redis.call('HSET', KEYS[1], 'progress', now_str())
return 1
