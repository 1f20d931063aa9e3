-- Observer: what a Converge::Service's version looks like in the cluster:
-- its state, placement and why it waits, whether the nodes that hold (or
-- held) its replicas are up, and the reports of its replica ids there.
-- KEYS: 1 svc, 2 nodes
-- ARGV: 1 svc_id, 2 node_prefix, 3 alive_prefix, 4 report_prefix, 5 all
-- node_prefix, alive_prefix, report_prefix: cv_key_prefix of CV_KEY_NODE,
-- CV_KEY_ALIVE, CV_KEY_REPORT (a node name appended names its key; the
-- {cluster} hash tag keeps them in one slot); all: '1' reads the nodes
-- of its placement and every registered node (a delete: its placement may
-- be gone already while processes still stop), else only the former.
-- Returns {state, gen, placement, unplaced, rejected, {node, up, address,
-- ...}, {node, rid, report, ...}, rollout, blocked} (rollout: the rolling
-- update's JSON, docs/crm.md, or ''; blocked: why every eligible node is
-- blocklisted for the service, JSON, or '').
local s = redis.call('HMGET', KEYS[1], 'state', 'gen', 'placement', 'unplaced', 'rejected',
  'rollout', 'blocked')
local placement = s[3] or '[]'
local nodes, seen = {}, {}
local function add(n)
  if type(n) == 'string' and not seen[n] then
    seen[n] = true
    nodes[#nodes + 1] = n
  end
end
for _, p in ipairs(cjson.decode(placement)) do
  if type(p) == 'table' then add(p.node) end
end
if ARGV[5] == '1' then
  for _, n in ipairs(redis.call('HKEYS', KEYS[2])) do add(n) end
end
local prefix = ARGV[1] .. '/'
local nodeinfo, reports = {}, {}
for _, n in ipairs(nodes) do
  local up = redis.call('EXISTS', ARGV[3] .. n)
  local address = redis.call('HGET', ARGV[2] .. n, 'address') or ''
  nodeinfo[#nodeinfo + 1] = n
  nodeinfo[#nodeinfo + 1] = tostring(up)
  nodeinfo[#nodeinfo + 1] = address
  local flat = redis.call('HGETALL', ARGV[4] .. n)
  for i = 1, #flat, 2 do
    if string.sub(flat[i], 1, #prefix) == prefix then
      reports[#reports + 1] = n
      reports[#reports + 1] = flat[i]
      reports[#reports + 1] = flat[i + 1]
    end
  end
end
return {s[1] or '', s[2] or '0', placement, s[4] or '[]', s[5] or '', nodeinfo, reports,
  s[6] or '', s[7] or ''}
