-- Reads what expanding or ending a traversal needs: the stack's action, name
-- and current traversal, the stored template, parameters, template files and
-- environment,
-- the index of resources that have records (name -> dependencies of the
-- recorded version), and the stack's nesting depth (0: not nested).
-- KEYS: 1 stack, 2 def, 3 index
-- ARGV: none
-- Returns {action, name, traversal, template, params, index(flat), files, depth,
-- env}.
local s = redis.call('HMGET', KEYS[1], 'action', 'name', 'traversal', 'depth')
local d = redis.call('HMGET', KEYS[2], 'template', 'params', 'files', 'env')
return {s[1] or '', s[2] or '', s[3] or '', d[1] or '{}', d[2] or '{}',
  redis.call('HGETALL', KEYS[3]), d[3] or '{}', s[4] or '0', d[4] or '{}'}
