-- Engine: a resource whose action the environment's registry stops with
-- hooks (Heat's breakpoints) pauses before it until each hook is cleared.
-- The stack's `hooks` hash holds, per resource, what the current traversal
-- paused on and which hooks were cleared for it (JSON: `traversal`,
-- `cleared` list, `waiting` hook or absent, `node`, `since`, `action`,
-- `status`, `physical_id`, `type`); a newer traversal starts afresh.
-- KEYS: 1 stack, 2 hooks, 3 events
-- ARGV: 1 traversal, 2 resource, 3 hooks, 4 node, 5 action, 6 status,
--       7 physical_id, 8 worker, 9 type, 10 before
-- hooks: the hooks the action needs, in order, space-separated (e.g.
-- 'pre-update pre-create'); action, status: the resource's as Heat names
-- them for the events ('INIT', 'COMPLETE' before a create); type: the
-- resource's as the template wrote it, for the events; before: a JSON list
-- of events ({"physical_id", "action", "status", "reason"}) a pause on
-- pre-create writes first — the update Heat began on the version a
-- replacement supersedes, which precedes the new version's hooks ('' none).
-- A caller that
-- is not told OK releases its lease and ends: the clear publishes the job
-- again.
-- Returns {'OK'} (every hook cleared: act), {'PAUSED', hook} (paused now,
-- the event "<ACTION> paused until Hook <hook> is cleared" written),
-- {'WAITING', hook} (paused already), or {'STALE', traversal}.
local st = redis.call('HMGET', KEYS[1], 'traversal', 'status', 'name')
if st[1] ~= ARGV[1] or not ends_with(st[2], '_IN_PROGRESS') then return {'STALE', st[1] or ''} end
local raw = redis.call('HGET', KEYS[2], ARGV[2])
local e = raw and cjson.decode(raw) or {}
if tostring(e.traversal) ~= ARGV[1] then e = {traversal = ARGV[1], cleared = {}} end
local cleared = {}
for _, h in ipairs(e.cleared or {}) do cleared[h] = true end
local paused_action = {['pre-create'] = 'CREATE', ['pre-update'] = 'UPDATE',
  ['pre-delete'] = 'DELETE'}
for hook in string.gmatch(ARGV[3], '%S+') do
  if not cleared[hook] then
    if e.waiting == hook then return {'WAITING', hook} end
    local t = now_str()
    e.waiting, e.node, e.since = hook, ARGV[4], t
    e.action, e.status, e.physical_id = ARGV[5], ARGV[6], ARGV[7]
    e.type = ARGV[9] ~= '' and ARGV[9] or nil
    -- A create is of a new resource (a replacement's too): INIT, as in Heat.
    if hook == 'pre-create' then e.action, e.status, e.physical_id = 'INIT', 'COMPLETE', '' end
    if #(e.cleared or {}) == 0 then e.cleared = nil end
    redis.call('HSET', KEYS[2], ARGV[2], cjson.encode(e))
    if hook == 'pre-create' and ARGV[10] ~= '' then
      for _, b in ipairs(cjson.decode(ARGV[10])) do
        add_event(KEYS[3], ARGV[2], b.physical_id, b.action, b.status, b.reason, ARGV[1], ARGV[8],
          t, e.type)
      end
    end
    add_event(KEYS[3], ARGV[2], e.physical_id, e.action, e.status,
      (paused_action[hook] or hook) .. ' paused until Hook ' .. hook .. ' is cleared', ARGV[1],
      ARGV[8], t, e.type)
    return {'PAUSED', hook}
  end
end
return {'OK'}
