-- Observer: the resource that a waiting resource's reference names (its
-- physical id) among the resources the waiter's recorded version depends
-- on, as Heat's resource_by_refid finds a wait condition's handle; its data
-- is read, and the waiter registered so that a signal to that resource has
-- the waiter looked at at once (signal_finish.lua answers it).
-- KEYS: 1 index
-- ARGV: 1 resource, 2 ref, 3 traversal, 4 version, 5 watch, 6 res_prefix,
--       7 waiters_prefix
-- resource: the waiter; ref: the physical id it refers to; traversal,
-- version and watch (0 or 1): the waiter's OBSERVE job, which a signal
-- publishes again; res_prefix and waiters_prefix: cv_key_prefix of
-- CV_KEY_RES and CV_KEY_WAITERS (a resource name appended names its record
-- and its waiters hash; the stack's hash tag keeps them in one slot).
-- Returns {name, type, data} of the resource found, or {'', '', ''}.
local deps = cjson.decode(redis.call('HGET', KEYS[1], ARGV[1]) or '[]')
for _, name in ipairs(deps) do
  local r = redis.call('HMGET', ARGV[6] .. name, 'physical_id', 'type', 'data')
  if r[1] and r[1] == ARGV[2] then
    redis.call('HSET', ARGV[7] .. name, ARGV[1], ARGV[3] .. ' ' .. ARGV[4] .. ' ' .. ARGV[5])
    return {name, r[2] or '', r[3] or '{}'}
  end
end
return {'', '', ''}
