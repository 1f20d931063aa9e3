-- Releases a lease only if this worker still holds it (compare-and-delete).
-- KEYS: 1 lease
-- ARGV: 1 token
-- Returns 1 if released.
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0
