-- Starts a traversal of a stack: CREATE (submit), UPDATE, DELETE or ROLLBACK.
-- KEYS: 1 stack, 2 def, 3 events
-- ARGV: 1 kind, 2 name, 3 id, 4 template, 5 params, 6 fname, 7 client,
--       8 rollback, 9 rerun, 10 files, 11 parent, 12 token, 13 cancel, 14 env,
--       15 drift, 16 upgrade
-- template, params: json; client: the worker or client id; rollback: the
-- flag ('1', '0', '' = keep); rerun: '1' for a re-run of a traversal that
-- found records made behind its back (the stack's `reruns` keeps counting;
-- stack_finish.lua begins the workers' re-runs itself); files:
-- template files json ('' = none / keep); parent: json {"stack",
-- "resource", "depth"} of a nested stack (CREATE); token: idempotency
-- token ('' = none); cancel: '1' for the ROLLBACK of `convergectl cancel`,
-- whose traversal (the stack's `cancel` field) does not wait for the
-- cancelled update's actions in flight, as a delete does not; env: the stack's Heat environment json ('' =
-- none / keep), what every traversal of the stack and its nested stacks reads;
-- 15 drift: '0' switches off the continuous convergence of the stack's
-- services by the cluster loop, '1' on, '' keeps it (a CREATE: on).
-- 16 upgrade: '1' makes the services of the stack update one upgrade domain
-- at a time (`convergectl upgrade`: the stack's `upgrade` field, which the
-- engine reads when it writes a service's spec), '0' not, '' keeps it.
-- Returns {traversal}. CREATE refuses an existing stack; the others bump the
-- traversal so that every job of the previous one stops at a safe point.
-- UPDATE stores the new definition (template, params, fname given as '' keep
-- the stored ones: a re-run); ROLLBACK restores the last definition
-- that reached COMPLETE (none: an empty one, which removes everything).
-- A call repeating the token of the last one (an engine retrying the action
-- of a nested stack's parent) begins nothing and returns that traversal.
local kind = ARGV[1]
local files, parent, token, env = ARGV[10] or '', ARGV[11] or '', ARGV[12] or '', ARGV[14] or ''
local t = now_str()
if token ~= '' and redis.call('HGET', KEYS[1], 'op') == token then
  return {tonumber(redis.call('HGET', KEYS[1], 'traversal'))}
end
if kind == 'CREATE' then
  if redis.call('EXISTS', KEYS[1]) == 1 then return redis.error_reply('EEXIST stack exists') end
  redis.call('HSET', KEYS[2], 'template', ARGV[4], 'params', ARGV[5], 'fname', ARGV[6])
  redis.call('HSET', KEYS[1], 'name', ARGV[2], 'id', ARGV[3], 'created', t,
    'rollback', ARGV[8] == '1' and '1' or '0', 'converge_drift', ARGV[15] == '0' and '0' or '1')
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
if (kind == 'CREATE' or kind == 'UPDATE') and env ~= '' then
  redis.call('HSET', KEYS[2], 'env', env)
end
if kind == 'UPDATE' then
  if ARGV[4] ~= '' then redis.call('HSET', KEYS[2], 'template', ARGV[4]) end
  if ARGV[5] ~= '' then redis.call('HSET', KEYS[2], 'params', ARGV[5]) end
  if ARGV[6] ~= '' then redis.call('HSET', KEYS[2], 'fname', ARGV[6]) end
  if ARGV[8] ~= '' then redis.call('HSET', KEYS[1], 'rollback', ARGV[8]) end
  if (ARGV[15] or '') ~= '' then redis.call('HSET', KEYS[1], 'converge_drift', ARGV[15]) end
  if (ARGV[16] or '') ~= '' then redis.call('HSET', KEYS[1], 'upgrade', ARGV[16]) end
end
-- ROLLBACK: begin_traversal (lib.lua) restores the last complete definition.
local trav = begin_traversal(KEYS[1], KEYS[2], KEYS[3], kind, ARGV[7], t, ARGV[9] == '1')
if token ~= '' then redis.call('HSET', KEYS[1], 'op', token) end
if ARGV[13] == '1' then redis.call('HSET', KEYS[1], 'cancel', trav) end
return {trav}
