-- Ends a traversal that has done every node: the stack becomes
-- <ACTION>_COMPLETE with its resolved outputs (or _FAILED). A complete
-- create, update or rollback makes its definition the one rollback returns
-- to. A delete that finds records made behind its back (an action of an
-- older traversal that finished after the delete was expanded) is not
-- complete: it answers AGAIN and the caller starts another delete traversal.
-- KEYS: 1 stack, 2 events, 3 def, 4 index
-- ARGV: 1 traversal, 2 status, 3 reason, 4 outputs, 5 worker
-- status: the status suffix (COMPLETE|FAILED); outputs: json.
-- Returns {'OK', action}, {'AGAIN'}, or STALE / SETTLED.
local st = redis.call('HMGET', KEYS[1], 'traversal', 'status', 'action', 'name', 'id')
if st[1] ~= ARGV[1] then return {'STALE', st[1] or ''} end
if not ends_with(st[2], '_IN_PROGRESS') then return {'SETTLED', st[2]} end
if ARGV[2] == 'COMPLETE' then
  if st[3] == 'DELETE' and redis.call('HLEN', KEYS[4]) > 0 then
    -- Bounded: records that survive repeated deletes are a failure to report.
    if redis.call('HINCRBY', KEYS[1], 'delete_reruns', 1) <= 3 then return {'AGAIN'} end
    ARGV[2] = 'FAILED'
    ARGV[3] = 'records remain after delete: ' ..
      table.concat(redis.call('HKEYS', KEYS[4]), ', ')
  end
  if st[3] ~= 'DELETE' then
    local d = redis.call('HMGET', KEYS[3], 'template', 'params', 'files')
    redis.call('HSET', KEYS[3], 'complete_template', d[1], 'complete_params', d[2],
      'complete_files', d[3] or '{}')
  end
end
redis.call('HSET', KEYS[1], 'status', st[3] .. '_' .. ARGV[2], 'reason', ARGV[3],
  'outputs', ARGV[4], 'updated', now_str())
add_event(KEYS[2], st[4], st[5], st[3], ARGV[2], ARGV[3], ARGV[1], ARGV[5])
return {'OK', st[3]}
