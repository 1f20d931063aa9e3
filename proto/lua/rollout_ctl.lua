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
local action = ARGV[1]
if action == 'pause' then
  r.pause = true
elseif action == 'resume' then
  r.pause = false
  r.resume = (tonumber(r.resume) or 0) + 1
elseif action == 'rollback' then
  r.rollback = true
else
  return redis.error_reply('EINVAL unknown rollout action ' .. tostring(action))
end
local out = cjson.encode(r)
redis.call('HSET', KEYS[1], 'rollout', out, 'converge', '1')
redis.call('HINCRBY', KEYS[1], 'gen', 1)
return {'OK', out}
