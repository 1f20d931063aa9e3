-- Engine: record what a SIGNAL job did to a resource and release the lease.
-- Fenced as check_finish: it applies only if the record's version is still
-- the one read under the lease, and increments it, so an observation of the
-- version before the signals can no longer overwrite what they changed.
-- KEYS: 1 res, 2 lease, 3 events, 4 signals, 5 waiters, 6 stack
-- ARGV: 1 version, 2 token, 3 data, 4 attrs, 5 applied, 6 resource,
--       7 worker, 8 res_prefix
-- data, attrs: the record's new fields (json; data '' = the record is left
-- as it is, version included: every signal was refused); applied: a json list of
-- {"id", "state" (applied or refused), "status" (of its SIGNAL event),
-- "reason"}, one per signal handled; res_prefix: cv_key_prefix of
-- CV_KEY_RES (a waiter's name appended names its record, in the same slot).
-- The waiters hash (waiter resource -> "traversal version watch", written by
-- signal_watch.lua) loses the waiters no longer in progress at that version.
-- Returns {'OK', new version, record status, record traversal, waiter,
-- traversal, version, watch, ...} with the waiters still waiting, or
-- {'FENCED', current version}.
local ver = tonumber(redis.call('HGET', KEYS[1], 'version') or '0')
if redis.call('GET', KEYS[2]) == ARGV[2] then redis.call('DEL', KEYS[2]) end
if ver ~= tonumber(ARGV[1]) then return {'FENCED', tostring(ver)} end
local applied = cjson.decode(ARGV[5])
local rec = redis.call('HMGET', KEYS[1], 'status', 'traversal', 'physical_id')
local t = now_str()
if ARGV[3] ~= '' then
  ver = ver + 1
  redis.call('HSET', KEYS[1], 'data', ARGV[3], 'attrs', ARGV[4], 'version', ver, 'updated', t)
end
local rtype = #applied > 0 and declared_type(KEYS[1]) or ''
for _, a in ipairs(applied) do
  redis.call('HSET', KEYS[4], 's:' .. a.id, a.state)
  add_event(KEYS[3], ARGV[6], rec[3], 'SIGNAL', a.status, a.reason, rec[2] or '0', ARGV[7], t,
    rtype)
end
local out = {'OK', tostring(ver), rec[1] or '', rec[2] or '0'}
local waiters = redis.call('HGETALL', KEYS[5])
for i = 1, #waiters, 2 do
  local trav, wver, watch = string.match(waiters[i + 1], '^(%d+) (%d+) ([01])$')
  local w = redis.call('HMGET', ARGV[8] .. waiters[i], 'version', 'status')
  if trav and w[1] == wver and ends_with(w[2], '_IN_PROGRESS') then
    out[#out + 1] = waiters[i]
    out[#out + 1] = trav
    out[#out + 1] = wver
    out[#out + 1] = watch
  else
    redis.call('HDEL', KEYS[5], waiters[i])
  end
end
touch_progress(KEYS[6], t)
return out
