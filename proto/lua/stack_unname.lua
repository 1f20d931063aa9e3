-- Frees the name of a stack that is gone or deleted: removes name -> id from
-- the names hash only while the name still maps to that stack (compare and
-- delete), so a name another stack took over meanwhile is never lost. The
-- names hash is a global key (its own Redis Cluster slot): whoever calls
-- this read the stack's status with a script of the stack's own keys first.
-- KEYS: 1 stacks
-- ARGV: 1 name, 2 id
-- Returns 1 freed, 0 not mapped to that stack.
if redis.call('HGET', KEYS[1], ARGV[1]) ~= ARGV[2] then return 0 end
return redis.call('HDEL', KEYS[1], ARGV[1])
