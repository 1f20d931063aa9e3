-- convergectl rollout pause|resume|rollback: the operator's word on the
-- rolling update of a service (its `rollout` field, docs/crm.md "Rolling
-- updates"). The planner reads it at its next plan: pause stops after the
-- step in flight, resume lifts a pause and allows one step more in manual
-- mode, rollback rolls the replaced replicas back to the old process spec.
-- KEYS: 1 svc
-- ARGV: 1 action
-- action: pause, resume or rollback. The service's generation increments,
-- so a plan made on the rollout before this write loses its commit and
-- plans again, and `converge` asks the cluster loop for a pass.
-- Returns {'OK', rollout} (the rollout as written), {'NONE'} (the service
-- has no rollout) or {'SETTLED', state} (complete or rolled_back: nothing
-- to act on).
local text = redis.call('HGET', KEYS[1], 'rollout')
if not text or text == '' then return {'NONE'} end
local ok, r = pcall(cjson.decode, text)
if not ok or type(r) ~= 'table' then return {'NONE'} end
if r.state == 'complete' or r.state == 'rolled_back' then return {'SETTLED', r.state} end
-- The text is patched, not re-encoded: cjson would turn the empty lists of
-- from_process (what a rollback assigns again) into empty objects. The
-- planner writes the rollout compact (jansson), so each control word appears
-- once as "key":value with a boolean or integer value, which no string of
-- the process spec can look like.
local action, out, n = ARGV[1], text, 0
if action == 'pause' then
  out, n = string.gsub(text, '"pause":%a+', '"pause":true', 1)
elseif action == 'resume' then
  out, n = string.gsub(text, '"pause":%a+', '"pause":false', 1)
  if n == 1 then
    out, n = string.gsub(out, '"resume":(%d+)',
      function(k) return '"resume":' .. tostring(tonumber(k) + 1) end, 1)
  end
elseif action == 'rollback' then
  out, n = string.gsub(text, '"rollback":%a+', '"rollback":true', 1)
else
  return redis.error_reply('EINVAL unknown rollout action ' .. tostring(action))
end
if n ~= 1 then return redis.error_reply('EINVAL the rollout has no ' .. action .. ' field') end
redis.call('HSET', KEYS[1], 'rollout', out, 'converge', '1')
redis.call('HINCRBY', KEYS[1], 'gen', 1)
return {'OK', out}
