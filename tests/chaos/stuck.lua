-- Where a stuck traversal waits (read only). KEYS: 1 the stack's record,
-- named so that on a Redis Cluster the call goes to its slot's master.
-- ARGV: 1 key prefix, 2 stack id, 3 traversal. Returns lines: "summary ...",
-- then for every node that is not done although all its predecessors are
-- ("ready"), its record:
-- "ready NODE preds=N sp=M status=... version=... traversal=... worker=... lease=...".
-- Key names are the patterns of docs/keyspace.md (made in C by proto/contract/cv_keys.h):
-- this script runs outside Converge, so it spells them out from the prefix.
local base = ARGV[1] .. '{' .. ARGV[2] .. '}:'
local t = ARGV[3]
local graph = redis.call('HGETALL', base .. 'graph:' .. t)
local npreds, nodes = {}, {}
for i = 1, #graph, 2 do
  nodes[#nodes + 1] = graph[i]
  npreds[graph[i]] = npreds[graph[i]] or 0
  local ok, e = pcall(cjson.decode, graph[i + 1])
  if ok and e.s then
    for _, s in ipairs(e.s) do npreds[s[1]] = s[2] end
  end
end
local out, ready, notdone = {}, 0, 0
for _, n in ipairs(nodes) do
  if redis.call('SISMEMBER', base .. 'done:' .. t, n) == 0 then
    notdone = notdone + 1
    local sp = redis.call('HLEN', base .. 'sp:' .. t .. ':' .. n)
    if sp >= npreds[n] then
      ready = ready + 1
      if ready <= 20 then
        local r = redis.call('HMGET', base .. 'res:' .. string.sub(n, 3), 'status', 'version',
          'traversal', 'worker', 'action', 'old')
        out[#out + 1] = string.format('ready %s preds=%d sp=%d status=%s version=%s traversal=%s worker=%s action=%s old=%s lease=%s',
          n, npreds[n], sp, r[1] or '-', r[2] or '-', r[3] or '-', r[4] or '-', r[5] or '-',
          string.sub(r[6] or '-', 1, 120), redis.call('GET', base .. 'lease:' .. string.sub(n, 3)) or '-')
      end
    end
  end
end
table.insert(out, 1, string.format('summary nodes=%d not_done=%d ready_not_done=%d', #nodes, notdone, ready))
return out
