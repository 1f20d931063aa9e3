-- Starts a traversal of a stack: submit (CREATE) or delete (DELETE).
-- KEYS: 1 stack, 2 def, 3 events
-- ARGV: 1 kind (CREATE|DELETE), 2 name, 3 id, 4 template json, 5 params json,
--       6 fname, 7 worker/client id, 8 rollback flag
-- Returns {traversal}. CREATE refuses an existing stack; DELETE bumps the
-- traversal so that every job of the previous one stops at a safe point.
local kind = ARGV[1]
local t = now_str()
if kind == 'CREATE' then
  if redis.call('EXISTS', KEYS[1]) == 1 then return redis.error_reply('EEXIST stack exists') end
  redis.call('HSET', KEYS[2], 'template', ARGV[4], 'params', ARGV[5], 'fname', ARGV[6])
  redis.call('HSET', KEYS[1], 'name', ARGV[2], 'id', ARGV[3], 'created', t,
    'rollback', ARGV[8])
end
if redis.call('EXISTS', KEYS[1]) == 0 then return redis.error_reply('ENOENT no such stack') end
local trav = redis.call('HINCRBY', KEYS[1], 'traversal', 1)
local status = kind .. '_IN_PROGRESS'
local reason = 'Stack ' .. kind .. ' started'
redis.call('HSET', KEYS[1], 'action', kind, 'status', status, 'reason', reason,
  'updated', t, 'total', 0, 'done', 0)
redis.call('HDEL', KEYS[1], 'expanded')
add_event(KEYS[3], ARGV[2], ARGV[3], kind, 'IN_PROGRESS', reason, tostring(trav), ARGV[7])
return {trav}
