-- Engine: take the lease of a resource for one graph node and load all that
-- the action needs, in one round trip; or the same for several nodes of one
-- traversal at once (the jobs one Kafka message carries).
-- KEYS: 1 stack, 2 res, 3 lease, 4 rdef, 5 sp, 6 done, 7 def, 8 graph,
--       9 publishing
-- ARGV: 1 traversal, 2 node, 3 token, 4 lease_ms, 5 resource
-- (rdef, sp, done, graph and publishing are the traversal's; sp is the
-- node's sync point; token is the caller's lease token
-- "<worker>@<incarnation>:<n>", lease_ms its length)
-- Variadic: more nodes of the same traversal, each three KEYS from 10 (its
-- res, lease, sp) and three ARGV from 6 (its node, token, resource). The
-- reply is then the list of the nodes' replies, the first node's first;
-- the stack is read once for all of them.
-- Returns {'OK', rdef, params, record(flat), syncpoint(flat), graph entry,
-- stack name, stack depth, template files (only for a nested resource,
-- whose rdef is marked "nested":true; else ''), the stack's action (CREATE,
-- UPDATE, DELETE, ROLLBACK; CANCEL for the rollback of a cancel: a delete
-- and a cancel do not wait for actions in flight), '1' when the lease was
-- taken over from a dead incarnation of the caller's worker, else ''}
-- or a reason
-- not to act: UNKNOWN (no such stack: the job is dead-lettered), STALE
-- (superseded), SETTLED (stack not in progress, e.g. FAILED), DONE (node
-- already done; with its graph entry when an engine did it and may have died
-- before publishing its successors' jobs: the caller publishes them),
-- NOTREADY (with the node's satisfied and required predecessors: its sync
-- point is not complete, so the job came early — after a Redis failover
-- lost a predecessor's completion that the successors' jobs were published
-- for; whoever completes the sync point publishes the job again), BUSY
-- (leased; with its PTTL).
local st = redis.call('HMGET', KEYS[1], 'traversal', 'status', 'name', 'depth', 'action',
  'cancel')
-- The ROLLBACK of a cancel acts like a delete on actions in flight.
if st[6] and st[6] == st[1] then st[5] = 'CANCEL' end
local params
local function begin(res, lease, sp, node, token, resource)
  if not st[1] and not st[2] then return {'UNKNOWN'} end
  if st[1] ~= ARGV[1] then return {'STALE', st[1] or ''} end
  if not ends_with(st[2], '_IN_PROGRESS') then return {'SETTLED', st[2] or ''} end
  if redis.call('SISMEMBER', KEYS[6], node) == 1 then
    if redis.call('SISMEMBER', KEYS[9], node) == 0 then return {'DONE'} end
    return {'DONE', redis.call('HGET', KEYS[8], node) or ''}
  end
  -- A job for a node its traversal's graph does not have is forged or
  -- corrupt: it must neither act nor fail the stack (the caller
  -- dead-letters it).
  local entry = redis.call('HGET', KEYS[8], node)
  if not entry then return {'NONODE'} end
  -- The entry's number of predecessors (cv_traversal_entry): its one "p"
  -- key; no string in it can hold a bare '"p":'.
  local preds = tonumber(string.match(entry, '"p":(%d+)') or '0')
  if preds > 0 then
    local satisfied = redis.call('HLEN', sp)
    if satisfied < preds then return {'NOTREADY', tostring(satisfied), tostring(preds)} end
  end
  -- A free lease, the usual case, is taken in one command. A held one is
  -- re-entrant for the same token: a job retrying after a transient error
  -- keeps its lease instead of waiting for it to expire. A lease of an
  -- earlier incarnation of the caller's own worker is a dead process's:
  -- taken over at once (lib.lua lease_holder_gone).
  local took_over = ''
  if not redis.call('SET', lease, token, 'PX', ARGV[4], 'NX') then
    local holder = redis.call('GET', lease)
    if holder and holder ~= token then
      if not lease_holder_gone(holder, token) then
        return {'BUSY', tostring(redis.call('PTTL', lease))}
      end
      took_over = '1'
    end
    redis.call('SET', lease, token, 'PX', ARGV[4])
  end
  local rdef = redis.call('HGET', KEYS[4], resource) or ''
  params = params or redis.call('HGET', KEYS[7], 'params') or '{}'
  local files = ''
  if string.find(rdef, '"nested":true', 1, true) then
    files = redis.call('HGET', KEYS[7], 'files') or '{}'
  end
  -- A root's sync point holds nothing: nobody passes it data.
  local spv = preds > 0 and redis.call('HGETALL', sp) or {}
  return {'OK', rdef, params, redis.call('HGETALL', res), spv, entry, st[3] or '',
    st[4] or '0', files, st[5] or '', took_over}
end
local first = begin(KEYS[2], KEYS[3], KEYS[5], ARGV[2], ARGV[3], ARGV[5])
if #KEYS == 9 then return first end
local out = {first}
for i = 10, #KEYS, 3 do
  local a = 6 + (i - 10)
  out[#out + 1] = begin(KEYS[i], KEYS[i + 1], KEYS[i + 2], ARGV[a], ARGV[a + 1], ARGV[a + 2])
end
return out
