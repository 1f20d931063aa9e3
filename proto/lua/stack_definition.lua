-- Reads what ending a traversal needs: the stack's action, name and current
-- traversal, and the stored template and parameters.
-- KEYS: 1 stack, 2 def.  Returns {action, name, traversal, template, params}.
local s = redis.call('HMGET', KEYS[1], 'action', 'name', 'traversal')
local d = redis.call('HMGET', KEYS[2], 'template', 'params')
return {s[1] or '', s[2] or '', s[3] or '', d[1] or '{}', d[2] or '{}'}
