-- Ends a traversal that has done every node: the stack becomes
-- <ACTION>_COMPLETE with its resolved outputs (or _FAILED when an output
-- cannot be resolved).
-- KEYS: 1 stack, 2 events.  ARGV: 1 traversal, 2 status suffix (COMPLETE|FAILED),
-- 3 reason, 4 outputs json, 5 worker
-- Returns {'OK', action} or STALE / SETTLED.
local st = redis.call('HMGET', KEYS[1], 'traversal', 'status', 'action', 'name', 'id')
if st[1] ~= ARGV[1] then return {'STALE', st[1] or ''} end
if not ends_with(st[2], '_IN_PROGRESS') then return {'SETTLED', st[2]} end
redis.call('HSET', KEYS[1], 'status', st[3] .. '_' .. ARGV[2], 'reason', ARGV[3],
  'outputs', ARGV[4], 'updated', now_str())
add_event(KEYS[2], st[4], st[5], st[3], ARGV[2], ARGV[3], ARGV[1], ARGV[5])
return {'OK', st[3]}
