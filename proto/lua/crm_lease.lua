-- The cluster resource manager's lease (docs/crm.md "The role"): the holder
-- keeps it, anyone takes it when it is free, and a holder that lost it
-- (expired while it was paused; another may hold it now) learns so before
-- it acts again. The value is "<worker>:<epoch>": the epoch, counted in the
-- status hash, grows with every new holder, so the value is a fencing token
-- no earlier holder can present (svc_move.lua checks it). The holder's
-- status fields are written here, only while the lease is its own, so a
-- paused holder that resumes never overwrites its successor's status.
-- KEYS: 1 lease, 2 status
-- ARGV: 1 worker, 2 held, 3 lease_ms, 4 fields
-- worker: the caller's worker id; held: the value the caller holds ('' =
-- none: take the lease if free); fields: JSON object of status fields to
-- set (string values) or ''.
-- Returns {'OK', value, taken, state} (taken '1' when the lease was just
-- taken: state is the status's `state`, the planner's memory, or ''),
-- {'LOST', holder} (the caller held it, no more: holder is the value now,
-- or '') or {'BUSY', holder} (another holds it).
local cur = redis.call('GET', KEYS[1])

local function write_fields()
  if ARGV[4] == '' then return end
  local ok, fields = pcall(cjson.decode, ARGV[4])
  if not ok or type(fields) ~= 'table' then return end
  local flat = {}
  for k, v in pairs(fields) do
    if type(v) == 'string' then
      flat[#flat + 1] = k
      flat[#flat + 1] = v
    end
  end
  if #flat > 0 then redis.call('HSET', KEYS[2], unpack(flat)) end
end

if ARGV[2] ~= '' then
  if cur ~= ARGV[2] then return {'LOST', cur or ''} end
  redis.call('PEXPIRE', KEYS[1], ARGV[3])
  write_fields()
  return {'OK', ARGV[2], '0', ''}
end
if cur then return {'BUSY', cur} end
local epoch = redis.call('HINCRBY', KEYS[2], 'epoch', 1)
local value = ARGV[1] .. ':' .. epoch
redis.call('SET', KEYS[1], value, 'PX', ARGV[3])
local t = redis.call('TIME')
redis.call('HSET', KEYS[2], 'holder', ARGV[1], 'since', string.format('%d.%03d', t[1],
  math.floor(tonumber(t[2]) / 1000)))
write_fields()
return {'OK', value, '1', redis.call('HGET', KEYS[2], 'state') or ''}
