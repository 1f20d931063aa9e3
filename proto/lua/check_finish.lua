-- Engine: record the action just taken on a resource and release the lease.
-- The write is fenced: it applies only if the record's version is still the
-- one read under the lease, so a worker that was paused past its lease can
-- never overwrite newer state.
-- KEYS: 1 res, 2 lease, 3 events, 4 counts, 5 index
-- ARGV: 1 expected version, 2 lease token, 3 status, 4 action, 5 reason,
--       6 physical id, 7 uuid, 8 type, 9 props, 10 attrs, 11 data,
--       12 traversal, 13 worker, 14 resource name, 15 event status,
--       16 dependencies json ('' = keep the index entry), 17 deletion policy,
--       18 replaced versions json ('' = keep), 19 extra events: json list of
--       {"physical_id", "action", "status", "reason"} ('' = none)
-- With an empty status (ARGV 3) only the replaced versions change: the
-- current version's fields are left as they are.
-- Returns {'OK', new version} or {'FENCED', current version}.
local ver = tonumber(redis.call('HGET', KEYS[1], 'version') or '0')
local function release()
  if redis.call('GET', KEYS[2]) == ARGV[2] then redis.call('DEL', KEYS[2]) end
end
if ver ~= tonumber(ARGV[1]) then
  release()
  return {'FENCED', tostring(ver)}
end
local t = now_str()
redis.call('HSET', KEYS[1], 'version', ver + 1, 'updated', t, 'worker', ARGV[13])
if ARGV[3] ~= '' then
  set_status(KEYS[1], KEYS[4], ARGV[3])
  redis.call('HSET', KEYS[1], 'action', ARGV[4], 'reason', ARGV[5],
    'physical_id', ARGV[6], 'uuid', ARGV[7], 'type', ARGV[8], 'props', ARGV[9],
    'attrs', ARGV[10], 'data', ARGV[11], 'traversal', ARGV[12], 'started', now_us_str(),
    'policy', ARGV[17])
end
if ARGV[18] ~= '' then redis.call('HSET', KEYS[1], 'old', ARGV[18]) end
if ARGV[16] ~= '' then redis.call('HSET', KEYS[5], ARGV[14], ARGV[16]) end
if ARGV[15] ~= '' then
  add_event(KEYS[3], ARGV[14], ARGV[6], ARGV[4], ARGV[15], ARGV[5], ARGV[12], ARGV[13])
end
if ARGV[19] ~= '' then
  for _, e in ipairs(cjson.decode(ARGV[19])) do
    add_event(KEYS[3], ARGV[14], e.physical_id, e.action, e.status, e.reason, ARGV[12], ARGV[13])
  end
end
release()
return {'OK', tostring(ver + 1)}
