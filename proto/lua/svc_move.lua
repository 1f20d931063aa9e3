-- The cluster resource manager's moves of one service (docs/crm.md "Moves"),
-- written into the service's record as desired state its reconcile carries
-- out. Fenced: refused unless the manager's lease still holds exactly the
-- caller's value, so a manager paused past its lease cannot move replicas
-- beside its successor. A move is written only when its index is placed on
-- its `from` node and has no move under way (the model it was planned on
-- may be older than the record); the others are skipped.
-- KEYS: 1 svc, 2 lease
-- ARGV: 1 lease_value, 2 moves
-- lease_value: "<worker>:<epoch>" as crm_lease.lua gave it; moves: JSON
-- list of {"index", "from", "to", "reason", "detail"}.
-- Returns {'OK', written} (the generation incremented when written > 0),
-- {'FENCED', holder} (holder: the lease's value now, or '') or {'GONE'}.
local cur = redis.call('GET', KEYS[2])
if cur ~= ARGV[1] then return {'FENCED', cur or ''} end
if redis.call('EXISTS', KEYS[1]) == 0 then return {'GONE'} end

local function decode(text)
  if not text or text == '' then return nil end
  local ok, v = pcall(cjson.decode, text)
  if ok and type(v) == 'table' then return v end
  return nil
end

local fields = redis.call('HMGET', KEYS[1], 'placement', 'moves')
local on = {}
for _, p in ipairs(decode(fields[1]) or {}) do
  if p.index ~= nil and type(p.node) == 'string' then on[tostring(p.index)] = p.node end
end
local moves = decode(fields[2]) or {}
local epoch = tonumber(string.match(ARGV[1], ':(%d+)$')) or 0
local t = redis.call('TIME')
local written = 0
for _, m in ipairs(decode(ARGV[2]) or {}) do
  local index = m.index ~= nil and tostring(m.index) or nil
  if index and moves[index] == nil and on[index] ~= nil and on[index] == m.from
      and type(m.to) == 'string' and m.to ~= m.from then
    moves[index] = {from = m.from, to = m.to, reason = m.reason or 'constraint',
      detail = m.detail or '', at = tonumber(t[1]), epoch = epoch}
    written = written + 1
  end
end
if written > 0 then
  redis.call('HSET', KEYS[1], 'moves', cjson.encode(moves))
  redis.call('HINCRBY', KEYS[1], 'gen', 1)
end
return {'OK', written}
