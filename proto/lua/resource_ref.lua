-- What a reference to a resource resolves to: its physical id, attributes
-- and type (the type says which of them get_resource gives).
-- KEYS: 1 res
-- ARGV: 1 resource
-- Returns {name, physical id, attrs json, type}.
local v = redis.call('HMGET', KEYS[1], 'physical_id', 'attrs', 'type')
return {ARGV[1], v[1] or '', v[2] or '{}', v[3] or ''}
