-- What a reference to a resource resolves to: its physical id and attributes.
-- KEYS: 1 res
-- ARGV: 1 resource
-- Returns {name, physical id, attrs json}.
local v = redis.call('HMGET', KEYS[1], 'physical_id', 'attrs')
return {ARGV[1], v[1] or '', v[2] or '{}'}
