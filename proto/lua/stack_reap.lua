-- Reaper: whether a stack is stalled, and on what. A stack is stalled when
-- it is in progress and nothing moved (`progress`, `updated`) for longer
-- than the threshold: then whatever job should be under way was lost or
-- its worker died, and publishing it again is safe because every handler is
-- idempotent.
-- KEYS: 1 stack
-- ARGV: 1 stall_ms
-- stall_ms: the stall threshold in milliseconds.
-- Returns one of
--   {'GONE'}, {'SETTLED', status}  no such stack / not in progress: nothing
--                             to do (but to free the name of a stack gone or
--                             DELETE_COMPLETE: stack_unname.lua)
--   {'MOVING'}                not stalled
--   {'STACK', trav, action}   the traversal was never expanded: its STACK job
--   {'FINISH', trav}          every node is done but the stack did not end
--   {'STALLED', trav, stalled seconds}  ready nodes may need their jobs:
--                             stack_reap_nodes.lua with the traversal's keys
-- A stalled stack's `progress` moves, so the same stall is not reaped again
-- before another threshold has passed; `reaped` is set when work is
-- re-queued (here for STACK and FINISH, by stack_reap_nodes.lua for nodes:
-- a stack whose only pending nodes are paused on hooks re-queues nothing).
local st = redis.call('HMGET', KEYS[1], 'status', 'traversal', 'expanded', 'total', 'done',
  'action', 'progress', 'updated')
if not st[1] then return {'GONE'} end
if not ends_with(st[1], '_IN_PROGRESS') then return {'SETTLED', st[1]} end
local trav = st[2]
local t = redis.call('TIME')
local now = tonumber(t[1]) + tonumber(t[2]) / 1e6
local last = math.max(tonumber(st[7] or '0') or 0, tonumber(st[8] or '0') or 0)
local stalled = now - last
if stalled * 1000 < tonumber(ARGV[1]) then return {'MOVING'} end
local ts = now_str()
redis.call('HSET', KEYS[1], 'progress', ts)
if st[3] ~= trav then
  redis.call('HSET', KEYS[1], 'reaped', ts)
  return {'STACK', trav, st[6] or ''}
end
if tonumber(st[5] or '0') >= tonumber(st[4] or '0') then
  redis.call('HSET', KEYS[1], 'reaped', ts)
  return {'FINISH', trav}
end
return {'STALLED', trav, tostring(math.floor(stalled))}
