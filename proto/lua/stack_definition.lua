-- Reads what expanding or ending a traversal needs: the stack's action, name
-- and current traversal, the stored template and parameters, and the index
-- of resources that have records (name -> dependencies of the recorded version).
-- KEYS: 1 stack, 2 def, 3 index.
-- Returns {action, name, traversal, template, params, index(flat)}.
local s = redis.call('HMGET', KEYS[1], 'action', 'name', 'traversal')
local d = redis.call('HMGET', KEYS[2], 'template', 'params')
return {s[1] or '', s[2] or '', s[3] or '', d[1] or '{}', d[2] or '{}',
  redis.call('HGETALL', KEYS[3])}
