-- Observer: what a Converge::Service's version looks like in the cluster:
-- its state, placement and why it waits, whether the nodes that hold (or
-- held) its replicas are up, and the reports of its replica ids there.
-- KEYS: 1 svc, 2 nodes
-- ARGV: 1 svc_id, 2 node_prefix, 3 alive_prefix, 4 report_prefix, 5 all
-- node_prefix, alive_prefix, report_prefix: cv_key_prefix of CV_KEY_NODE,
-- CV_KEY_ALIVE, CV_KEY_REPORT (a node name appended names its key; the
-- {cluster} hash tag keeps them in one slot); all: '1' reads the reports
-- of every node (a delete: its placement may be gone already), else only
-- those of the nodes in its placement.
-- Returns {state, gen, placement, unplaced, rejected, {node, up, address,
-- ...}, {node, rid, report, ...}}.
local s = redis.call('HMGET', KEYS[1], 'state', 'gen', 'placement', 'unplaced', 'rejected')
local placement = s[3] or '[]'
local nodes = {}
if ARGV[5] == '1' then
  nodes = redis.call('HKEYS', KEYS[2])
else
  local seen = {}
  for _, p in ipairs(cjson.decode(placement)) do
    if type(p) == 'table' and type(p.node) == 'string' and not seen[p.node] then
      seen[p.node] = true
      nodes[#nodes + 1] = p.node
    end
  end
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
return {s[1] or '', s[2] or '0', placement, s[4] or '[]', s[5] or '', nodeinfo, reports}
