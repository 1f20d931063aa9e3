-- Engine: a signal that one resource passes on to another, as Heat's
-- ScalingPolicy adjusts the group its auto_scaling_group_id names. The
-- target is found among the sender's recorded dependencies by physical id
-- (Heat's resource_by_refid) and the signal stored in its signals hash as
-- signal_send.lua stores one, in one step: a SIGNAL job of the sender that
-- dies after this and runs again stores nothing twice (the id repeats).
-- KEYS: 1 index
-- ARGV: 1 resource, 2 ref, 3 id, 4 details, 5 res_prefix, 6 signals_prefix
-- resource: the sender; ref: the physical id it names; id: the passed-on
-- signal's id; details: its data (json); res_prefix, signals_prefix:
-- cv_key_prefix of CV_KEY_RES and CV_KEY_SIGNALS (the stack's hash tag
-- keeps them in one slot).
-- Returns {name, 'OK' | 'DUP'} of the target, or {'', ''} when no
-- dependency has that physical id.
local deps = cjson.decode(redis.call('HGET', KEYS[1], ARGV[1]) or '[]')
for _, name in ipairs(deps) do
  local r = redis.call('HMGET', ARGV[5] .. name, 'physical_id', 'status')
  if r[1] and r[1] == ARGV[2] then
    local signals = ARGV[6] .. name
    if redis.call('HEXISTS', signals, 's:' .. ARGV[3]) == 1 then return {name, 'DUP'} end
    local seq = redis.call('HINCRBY', signals, 'seq', 1)
    redis.call('HSET', signals, 'd:' .. ARGV[3], ARGV[4], 'q:' .. ARGV[3], seq,
      's:' .. ARGV[3], 'pending')
    return {name, 'OK'}
  end
end
return {'', ''}
