-- Commits a plan of the live placement engine (scheduler/live, planned by
-- cv_reconcile) for one service, re-checking what the plan assumed: the
-- service's generation is the one planned on, and every node given a replica
-- is alive, enabled and keeps its capacity per metric (the declared `load`
-- of every replica spec assigned to it, less the ones this commit takes
-- away, plus the new ones, within its capacity — with overbooking when the
-- settings give it). All of it or nothing is written: two services
-- committed at once never overfill a node, a node that died or was disabled
-- since the plan gets nothing, and the loser re-plans on fresh state.
-- KEYS: 1 svc, 2 services, 3 nodes, 4 settings, 5 health, 6 load
-- ARGV: 1 svc_id, 2 gen, 3 placement, 4 unplaced, 5 blocklist, 6 failures,
--       7 rejected, 8 health, 9 remove, 10 alive_prefix, 11 node_prefix,
--       12 notify_prefix, 13 health_source, 14 moves, 15 rollout, 16 gave_up,
--       17 blocked
-- Variadic: KEYS from 7 are the assign hashes of the operations' nodes, ARGV
-- from 18 the operations, in the same order: "assign\t<node>\t<rid>\t<spec>"
-- or "unassign\t<node>\t<rid>".
-- gen: the generation planned on; placement, unplaced, blocklist, failures,
-- gave_up: the service's new fields (JSON); rejected: why the service cannot
-- fit, blocked: why it waits for nothing but its blocklist (every eligible
-- node blocklisted) ('' = neither: the field is removed); health: JSON list of the service's
-- health reports, which replace every report of health_source; moves, rollout:
-- the service's moves still to make and its rollout (JSON; '' = none: the field
-- is removed; docs/crm.md); remove: '1'
-- when the service is deleting and has nothing left on any node: its hash,
-- its reported loads (load), its membership in services and its reports
-- go. The *_prefix arguments are
-- key prefixes made by cv_key_prefix (CV_KEY_ALIVE, CV_KEY_NODE,
-- CV_KEY_NOTIFY): a node name appended names the node's key, in the same
-- {cluster} slot.
-- Returns {'OK', gen} (the new generation; every touched node was notified on
-- its channel), {'GONE'} (no such service), {'STALE', gen} (the service
-- changed since the plan: re-plan), {'UNAVAILABLE', node, why} (why: down,
-- unknown, disabled, draining) or {'FULL', node, metric} (the node's
-- capacity for metric would be exceeded). Nothing is written but on OK.
local svc_key, gen_planned = KEYS[1], ARGV[2]
local gen = redis.call('HGET', svc_key, 'gen')
if redis.call('EXISTS', svc_key) == 0 then return {'GONE'} end
if (gen or '0') ~= gen_planned then return {'STALE', gen or '0'} end

local function decode(text)
  if not text or text == '' then return nil end
  local ok, v = pcall(cjson.decode, text)
  if ok and type(v) == 'table' then return v end
  return nil
end

-- The operations, grouped by node.
local nodes, order = {}, {}
for i = 7, #KEYS do
  local line = ARGV[11 + i]
  local op, node, rid, spec = string.match(line, '^(%a+)\t([^\t]+)\t([^\t]+)\t?(.*)$')
  if not nodes[node] then
    nodes[node] = {key = KEYS[i], add = {}, drop = {}}
    order[#order + 1] = node
  end
  if op == 'assign' then
    nodes[node].add[#nodes[node].add + 1] = {rid = rid, spec = spec}
  else
    nodes[node].drop[rid] = true
  end
end

local settings = decode(redis.call('GET', KEYS[4])) or {}
local overbook = (settings.settings or {}).nodeOverbookingPercentage or {}
local types = settings.nodeTypes or {}

-- The most a node may carry of a metric: its capacity (its own, else its
-- type's), with overbooking; nil when unlimited.
local function limit(desc, metric)
  local cap = (desc.capacities or {})[metric]
  if cap == nil then cap = ((types[desc.type or ''] or {}).capacities or {})[metric] end
  cap = tonumber(cap)
  if cap == nil then return nil end
  local over = tonumber(overbook[metric] or 0) or 0
  if over < 0 then return nil end
  return math.floor(cap * (1 + over) + 1e-9)
end

local function add_loads(sum, spec)
  local load = spec and spec.load
  if type(load) ~= 'table' then return end
  for metric, v in pairs(load) do
    local n = tonumber(v)
    if n then sum[metric] = (sum[metric] or 0) + n end
  end
end

for _, node in ipairs(order) do
  local n = nodes[node]
  if #n.add > 0 then
    if redis.call('EXISTS', ARGV[10] .. node) == 0 then return {'UNAVAILABLE', node, 'down'} end
    local admin = redis.call('HGET', ARGV[11] .. node, 'admin') or 'enabled'
    if admin ~= 'enabled' then return {'UNAVAILABLE', node, admin} end
    local desc = decode(redis.call('HGET', KEYS[3], node))
    if not desc then return {'UNAVAILABLE', node, 'unknown'} end
    local sum, new, adding = {}, {}, {}
    for _, a in ipairs(n.add) do
      adding[a.rid] = true
      add_loads(new, decode(a.spec))
    end
    local assigned = redis.call('HGETALL', n.key)
    for j = 1, #assigned, 2 do
      local rid = assigned[j]
      if not n.drop[rid] and not adding[rid] then add_loads(sum, decode(assigned[j + 1])) end
    end
    for metric, extra in pairs(new) do
      local cap = limit(desc, metric)
      if extra > 0 and cap ~= nil and (sum[metric] or 0) + extra > cap then
        return {'FULL', node, metric}
      end
    end
  end
end

-- Every check passed: write.
for _, node in ipairs(order) do
  local n = nodes[node]
  for rid in pairs(n.drop) do redis.call('HDEL', n.key, rid) end
  for _, a in ipairs(n.add) do redis.call('HSET', n.key, a.rid, a.spec) end
end
local new_gen = redis.call('HINCRBY', svc_key, 'gen', 1)

local prefix = ARGV[13] .. '|'
for _, field in ipairs(redis.call('HKEYS', KEYS[5])) do
  if string.sub(field, 1, #prefix) == prefix then redis.call('HDEL', KEYS[5], field) end
end

if ARGV[9] == '1' then
  redis.call('DEL', svc_key, KEYS[6])
  redis.call('SREM', KEYS[2], ARGV[1])
else
  redis.call('HSET', svc_key, 'placement', ARGV[3], 'unplaced', ARGV[4], 'blocklist', ARGV[5],
    'failures', ARGV[6], 'gave_up', ARGV[16])
  for field, value in pairs({rejected = ARGV[7], moves = ARGV[14], rollout = ARGV[15],
    blocked = ARGV[17]}) do
    if value ~= '' then
      redis.call('HSET', svc_key, field, value)
    else
      redis.call('HDEL', svc_key, field)
    end
  end
  local t = redis.call('TIME')
  local now = tonumber(t[1]) + tonumber(t[2]) / 1000000
  for _, report in ipairs(decode(ARGV[8]) or {}) do
    report.time = now
    redis.call('HSET', KEYS[5], (report.source or ARGV[13]) .. '|' .. (report.property or ''),
      cjson.encode(report))
  end
end

for _, node in ipairs(order) do redis.call('PUBLISH', ARGV[12] .. node, new_gen) end
return {'OK', new_gen}
