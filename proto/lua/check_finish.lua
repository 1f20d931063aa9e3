-- Engine: record the action just taken on a resource and release the lease.
-- The write is fenced: it applies only if the record's version is still the
-- one read under the lease, so a worker that was paused past its lease can
-- never overwrite newer state.
-- KEYS: 1 res, 2 lease, 3 events, 4 counts, 5 index, 6 ledger, 7 stack
-- ARGV: 1 version, 2 token, 3 status, 4 action, 5 reason, 6 physical_id,
--       7 uuid, 8 type, 9 props, 10 attrs, 11 data, 12 traversal, 13 worker,
--       14 resource, 15 event_status, 16 dependencies, 17 policy, 18 old,
--       19 events, 20 started, 21 declared_type
-- version: the record version read under the lease; token: the lease's;
-- event_status: of the event to add ('' = none); dependencies: json
-- ('' = keep the index entry); policy: the deletion policy; old: replaced
-- versions json ('' = keep); events: extra events, a json list of
-- {"physical_id", "action", "status", "reason"} ('' = none); started: when
-- the recorded action started ('' = now; a rollback restoring a replaced
-- version keeps that version's time); declared_type: the type the template
-- wrote, what the record and its events report (`type` is the one that
-- implements it). An extra event names its own type ("type": a replaced
-- version's) or takes it; one marked "first" comes before the action's own
-- event (the update Heat began before its handle_update asked for a
-- replacement), the others after it.
-- With an empty status (ARGV 3) only the replaced versions change: the
-- current version's fields are left as they are.
-- Every physical create or delete of a resource version this write records
-- is counted in the stack's ledger (create:<uuid>, delete:<uuid>): here,
-- past the fence, so a duplicated or retried job can never count twice.
-- Returns {'OK', new version} or {'FENCED', current version}.
local ver = tonumber(redis.call('HGET', KEYS[1], 'version') or '0')
local function release()
  if redis.call('GET', KEYS[2]) == ARGV[2] then redis.call('DEL', KEYS[2]) end
end
-- Replaced versions whose delete this write starts: DELETE_IN_PROGRESS in
-- the new list and neither in the recorded one nor the current version
-- being deleted (a replacement moves that version into the list with its
-- delete already counted). Decoded before anything is written, so that
-- malformed input fails the script with nothing changed.
local function deletes_started()
  local uuids = {}
  if ARGV[18] == '' then return uuids end
  local before = {}
  for _, v in ipairs(cjson.decode(redis.call('HGET', KEYS[1], 'old') or '[]')) do
    if v.status == 'DELETE_IN_PROGRESS' and v.uuid then before[v.uuid] = true end
  end
  local cur = redis.call('HMGET', KEYS[1], 'status', 'uuid')
  if cur[1] == 'DELETE_IN_PROGRESS' and cur[2] then before[cur[2]] = true end
  for _, v in ipairs(cjson.decode(ARGV[18])) do
    if v.status == 'DELETE_IN_PROGRESS' and v.uuid and not before[v.uuid] then
      uuids[#uuids + 1] = v.uuid
    end
  end
  return uuids
end
if ver ~= tonumber(ARGV[1]) then
  release()
  return {'FENCED', tostring(ver)}
end
local extra = ARGV[19] ~= '' and cjson.decode(ARGV[19]) or {}
local old_deletes = deletes_started()
local t = now_str()
redis.call('HSET', KEYS[1], 'version', ver + 1, 'updated', t, 'worker', ARGV[13])
-- (A write without an event restores a version already counted.)
if ARGV[3] ~= '' and ARGV[7] ~= '' and ARGV[15] ~= '' and
    (ARGV[4] == 'CREATE' or ARGV[4] == 'DELETE') then
  redis.call('HINCRBY', KEYS[6], string.lower(ARGV[4]) .. ':' .. ARGV[7], 1)
end
for _, uuid in ipairs(old_deletes) do redis.call('HINCRBY', KEYS[6], 'delete:' .. uuid, 1) end
touch_progress(KEYS[7], t)
if ARGV[3] ~= '' then
  set_status(KEYS[1], KEYS[4], ARGV[3])
  redis.call('HSET', KEYS[1], 'action', ARGV[4], 'reason', ARGV[5],
    'physical_id', ARGV[6], 'uuid', ARGV[7], 'type', ARGV[8], 'props', ARGV[9],
    'attrs', ARGV[10], 'data', ARGV[11], 'traversal', ARGV[12],
    'started', ARGV[20] ~= '' and ARGV[20] or now_us_str(),
    'policy', ARGV[17], 'declared_type', ARGV[21])
end
if ARGV[18] ~= '' then redis.call('HSET', KEYS[1], 'old', ARGV[18]) end
if ARGV[16] ~= '' then redis.call('HSET', KEYS[5], ARGV[14], ARGV[16]) end
local function add_extra(first)
  for _, e in ipairs(extra) do
    if (e.first == true) == first then
      add_event(KEYS[3], ARGV[14], e.physical_id, e.action, e.status, e.reason, ARGV[12],
        ARGV[13], nil, e.type or ARGV[21])
    end
  end
end
add_extra(true)
if ARGV[15] ~= '' then
  add_event(KEYS[3], ARGV[14], ARGV[6], ARGV[4], ARGV[15], ARGV[5], ARGV[12], ARGV[13], nil,
    ARGV[21])
end
add_extra(false)
release()
return {'OK', tostring(ver + 1)}
