-- The chaos suite's read of one stack, in one round trip, as JSON (read only).
-- KEYS: 1 the stack's record (cv:{id}:stack), named so that on a Redis
-- Cluster the call goes to the master of the stack's slot.
-- ARGV: 1 key prefix (cv:), 2 stack id, 3 the first traversal whose events
-- to return ('' = all events): a phase may span traversals (a delete that
-- found late records runs again), 4 'cluster' on a Redis Cluster: the name
-- map (cv:stacks, another slot, maybe another node) is not read, its
-- reader adds name_mapped (tests/chaos/check.sh). Every collection is a JSON object (an empty Lua table
-- encodes as {}), except `events`, a list of
-- [stream id, resource, action, status, traversal, physical id, worker].
-- Key names are the patterns of docs/keyspace.md (made in C by proto/contract/cv_keys.h):
-- this script runs outside Converge, so it spells them out from the prefix.
local prefix, id, trav = ARGV[1], ARGV[2], tonumber(ARGV[3])
local base = prefix .. '{' .. id .. '}:'

local function hash(key)
  local flat, t = redis.call('HGETALL', key), {}
  for i = 1, #flat, 2 do t[flat[i]] = flat[i + 1] end
  return t
end

local out = {stack = hash(base .. 'stack'), counts = hash(base .. 'counts'),
  index = hash(base .. 'index'), ledger = hash(base .. 'ledger'),
  ledger_exists = redis.call('EXISTS', base .. 'ledger'), res = {}, leases = {}, other = {}}

-- Every key of the stack: records, leases, and what a traversal leaves behind.
local cursor = '0'
repeat
  local r = redis.call('SCAN', cursor, 'MATCH', base .. '*', 'COUNT', 1000)
  cursor = r[1]
  for _, key in ipairs(r[2]) do
    local rest = string.sub(key, #base + 1)
    if string.sub(rest, 1, 4) == 'res:' then
      local f = redis.call('HMGET', key, 'status', 'uuid', 'old', 'version', 'worker',
        'traversal', 'action', 'physical_id', 'props', 'type')
      out.res[string.sub(rest, 5)] = {status = f[1] or '', uuid = f[2] or '', old = f[3] or '',
        version = f[4] or '', worker = f[5] or '', traversal = f[6] or '', action = f[7] or '',
        physical_id = f[8] or '', props = f[9] or '', type = f[10] or ''}
    elseif string.sub(rest, 1, 6) == 'lease:' then
      out.leases[string.sub(rest, 7)] = redis.call('GET', key) or ''
    else
      out.other[rest] = redis.call('TYPE', key).ok
    end
  end
until cursor == '0'

local events = {}
local last = '-'
repeat
  local page = redis.call('XRANGE', base .. 'events', last, '+', 'COUNT', 5000)
  for _, e in ipairs(page) do
    if e[1] ~= last then
      local f = {}
      for i = 1, #e[2], 2 do f[e[2][i]] = e[2][i + 1] end
      if not trav or (tonumber(f.traversal) or 0) >= trav then
        -- An entry with `begun` is a settled action's IN_PROGRESS and COMPLETE.
        if f.begun then
          events[#events + 1] = {e[1], f.resource or '', f.action or '', 'IN_PROGRESS',
            f.traversal or '', f.physical_id or '', f.worker or ''}
        end
        events[#events + 1] = {e[1], f.resource or '', f.action or '', f.status or '',
          f.traversal or '', f.physical_id or '', f.worker or ''}
      end
    end
  end
  if #page > 0 then last = page[#page][1] end
until #page < 5000
out.events = events
if ARGV[4] ~= 'cluster' then
  out.name_mapped = redis.call('HGET', prefix .. 'stacks', out.stack.name or '') or ''
end
return cjson.encode(out)
