-- convergectl rekey: replaces one hash field's value by the same value
-- sealed with the current key, only while the field still holds what was
-- read (compare and set): a worker that wrote the field meanwhile wrote it
-- sealed with the current key already, and its write stands.
-- KEYS: 1 hash
-- ARGV: 1 field, 2 expected, 3 value
-- Returns 1 replaced, 0 the field changed meanwhile (or is gone).
if redis.call('HGET', KEYS[1], ARGV[1]) ~= ARGV[2] then return 0 end
redis.call('HSET', KEYS[1], ARGV[1], ARGV[3])
return 1
