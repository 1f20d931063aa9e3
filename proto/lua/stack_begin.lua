-- Starts a traversal of a stack: CREATE (submit), UPDATE, DELETE or ROLLBACK.
-- KEYS: 1 stack, 2 def, 3 events
-- ARGV: 1 kind, 2 name, 3 id, 4 template, 5 params, 6 fname, 7 client,
--       8 rollback, 9 delete_rerun, 10 files, 11 parent, 12 token
-- template, params: json; client: the worker or client id; rollback: the
-- flag ('1', '0', '' = keep); delete_rerun: '1' when a worker re-runs a
-- delete that found late records; files: template files json ('' = none /
-- keep); parent: json {"stack", "resource", "depth"} of a nested stack
-- (CREATE); token: idempotency token ('' = none).
-- Returns {traversal}. CREATE refuses an existing stack; the others bump the
-- traversal so that every job of the previous one stops at a safe point.
-- UPDATE stores the new definition; ROLLBACK restores the last definition
-- that reached COMPLETE (none: an empty one, which removes everything).
-- A call repeating the token of the last one (an engine retrying the action
-- of a nested stack's parent) begins nothing and returns that traversal.
local kind = ARGV[1]
local files, parent, token = ARGV[10] or '', ARGV[11] or '', ARGV[12] or ''
local t = now_str()
if token ~= '' and redis.call('HGET', KEYS[1], 'op') == token then
  return {tonumber(redis.call('HGET', KEYS[1], 'traversal'))}
end
if kind == 'CREATE' then
  if redis.call('EXISTS', KEYS[1]) == 1 then return redis.error_reply('EEXIST stack exists') end
  redis.call('HSET', KEYS[2], 'template', ARGV[4], 'params', ARGV[5], 'fname', ARGV[6])
  redis.call('HSET', KEYS[1], 'name', ARGV[2], 'id', ARGV[3], 'created', t,
    'rollback', ARGV[8] == '1' and '1' or '0')
  if parent ~= '' then
    local p = cjson.decode(parent)
    redis.call('HSET', KEYS[1], 'parent', p.stack, 'parent_resource', p.resource,
      'depth', tostring(p.depth))
  end
end
if redis.call('EXISTS', KEYS[1]) == 0 then return redis.error_reply('ENOENT no such stack') end
if (kind == 'CREATE' or kind == 'UPDATE') and files ~= '' then
  redis.call('HSET', KEYS[2], 'files', files)
end
if kind == 'UPDATE' then
  redis.call('HSET', KEYS[2], 'template', ARGV[4], 'params', ARGV[5], 'fname', ARGV[6])
  if ARGV[8] ~= '' then redis.call('HSET', KEYS[1], 'rollback', ARGV[8]) end
elseif kind == 'ROLLBACK' then
  local c = redis.call('HMGET', KEYS[2], 'complete_template', 'complete_params', 'complete_files')
  redis.call('HSET', KEYS[2],
    'template', c[1] or '{"heat_template_version":"2013-05-23","resources":{}}',
    'params', c[2] or '{}', 'files', c[3] or '{}')
end
local trav = redis.call('HINCRBY', KEYS[1], 'traversal', 1)
local status = kind .. '_IN_PROGRESS'
local reason = 'Stack ' .. kind .. ' started'
redis.call('HSET', KEYS[1], 'action', kind, 'status', status, 'reason', reason,
  'updated', t, 'total', 0, 'done', 0)
if token ~= '' then redis.call('HSET', KEYS[1], 'op', token) end
redis.call('HDEL', KEYS[1], 'expanded')
if ARGV[9] ~= '1' then redis.call('HDEL', KEYS[1], 'delete_reruns') end
local name = redis.call('HGET', KEYS[1], 'name')
add_event(KEYS[3], name, ARGV[3], kind, 'IN_PROGRESS', reason, tostring(trav), ARGV[7])
return {trav}
