-- Removes the keys of the stack's retired traversals (lib.lua
-- retire_traversal: ended or superseded), one bounded batch per call, so
-- that a traversal of a million nodes never blocks Redis: each call looks
-- at about `count` entries of one traversal's graph and unlinks their sync
-- points; once the graph is scanned it unlinks the traversal's rdef,
-- graph, done and publishing keys and takes it off the `gc` set. A sweep
-- that dies between calls leaves the traversal listed, and the next one
-- starts it again from the beginning (unlinking a missing key is nothing).
-- Nothing a reader needs goes: a retired traversal's jobs answer STALE or
-- SETTLED before they read its keys, and no script writes them again.
-- KEYS: 1 gc
-- ARGV: 1 stack_prefix, 2 traversal, 3 cursor, 4 count
-- stack_prefix: '<prefix>{<stack>}:' (the stack's keys, cv_keys.h);
-- traversal: the one being swept ('' = the lowest in `gc`); cursor: of
-- its graph's HSCAN ('0' to start); count: graph entries per call.
-- Returns {'DONE'} (no traversal left to sweep) or {'AGAIN', traversal,
-- cursor}: call again with them (traversal '' once one is finished).
local trav = ARGV[2]
if trav == '' then
  local lowest
  for _, t in ipairs(redis.call('SMEMBERS', KEYS[1])) do
    if not lowest or tonumber(t) < tonumber(lowest) then lowest = t end
  end
  if not lowest then return {'DONE'} end
  trav = lowest
end
local p = ARGV[1]
local graph = p .. 'graph:' .. trav
local scan = redis.call('HSCAN', graph, ARGV[3], 'COUNT', ARGV[4])
local sps = {}
for i = 1, #scan[2], 2 do sps[#sps + 1] = p .. 'sp:' .. trav .. ':' .. scan[2][i] end
for i = 1, #sps, 1000 do
  redis.call('UNLINK', unpack(sps, i, math.min(i + 999, #sps)))
end
if scan[1] ~= '0' then return {'AGAIN', trav, scan[1]} end
redis.call('UNLINK', p .. 'rdef:' .. trav, p .. 'done:' .. trav, p .. 'publishing:' .. trav, graph)
redis.call('SREM', KEYS[1], trav)
return {'AGAIN', '', '0'}
