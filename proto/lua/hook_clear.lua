-- Clears the hook a resource waits on (convergectl hook-clear, and a signal
-- whose data is {"unset_hook": HOOK}, as Heat's signal clears it): the
-- event "Hook <hook> is cleared" is written and the caller publishes the
-- CHECK job of NODE for TRAVERSAL, so the traversal goes on. Durable once
-- it answers: should that job be lost, the reaper publishes it again (the
-- node is ready and not done), and hook_wait.lua then lets it act.
-- KEYS: 1 stack, 2 hooks, 3 events
-- ARGV: 1 resource, 2 hook, 3 client
-- hook: the hook to clear ('' = whichever the resource waits on).
-- Returns {'OK', traversal, node, hook}, or {'NOHOOK', hook} when the
-- resource does not wait on that hook (Heat refuses such a clear).
local raw = redis.call('HGET', KEYS[2], ARGV[1])
local e = raw and cjson.decode(raw) or {}
local hook = ARGV[2] ~= '' and ARGV[2] or (e.waiting or '')
if not e.waiting or e.waiting ~= hook then return {'NOHOOK', hook} end
local cleared = e.cleared or {}
cleared[#cleared + 1] = hook
e.cleared, e.waiting = cleared, nil
redis.call('HSET', KEYS[2], ARGV[1], cjson.encode(e))
add_event(KEYS[3], ARGV[1], e.physical_id, e.action, e.status, 'Hook ' .. hook .. ' is cleared',
  tostring(e.traversal), ARGV[3], nil, e.type)
redis.call('HSET', KEYS[1], 'progress', now_str())
return {'OK', tostring(e.traversal), e.node, hook}
