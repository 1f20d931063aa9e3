-- Engine: take the lease of a resource for a SIGNAL job and load what
-- applying its pending signals needs, in one round trip.
-- KEYS: 1 stack, 2 res, 3 lease, 4 signals
-- ARGV: 1 token, 2 lease_ms
-- token is the caller's lease token ("<worker>@<incarnation>:s<n>"),
-- lease_ms its length. A lease held by an earlier incarnation of the
-- caller's own worker is a dead process's: taken over at once (lib.lua
-- lease_holder_gone).
-- Returns {'OK', record(flat), id, details, ...} with every
-- pending signal in its order of arrival, or a reason not to act: UNKNOWN
-- (no such stack), GONE (the resource has no record any more), DONE
-- (nothing pending: a duplicate job, or another applied them), BUSY (leased;
-- with its PTTL).
if redis.call('EXISTS', KEYS[1]) == 0 then return {'UNKNOWN'} end
if redis.call('HEXISTS', KEYS[2], 'status') == 0 then return {'GONE'} end
local all = redis.call('HGETALL', KEYS[4])
local pending = {}
for i = 1, #all, 2 do
  local f = all[i]
  if string.sub(f, 1, 2) == 's:' and all[i + 1] == 'pending' then
    local id = string.sub(f, 3)
    pending[#pending + 1] = {id, tonumber(redis.call('HGET', KEYS[4], 'q:' .. id) or '0')}
  end
end
if #pending == 0 then return {'DONE'} end
table.sort(pending, function(a, b) return a[2] < b[2] end)
local holder = redis.call('GET', KEYS[3])
if holder and holder ~= ARGV[1] and not lease_holder_gone(holder, ARGV[1]) then
  return {'BUSY', tostring(redis.call('PTTL', KEYS[3]))}
end
redis.call('SET', KEYS[3], ARGV[1], 'PX', ARGV[2])
local out = {'OK', redis.call('HGETALL', KEYS[2])}
for _, p in ipairs(pending) do
  out[#out + 1] = p[1]
  out[#out + 1] = redis.call('HGET', KEYS[4], 'd:' .. p[1]) or 'null'
end
return out
