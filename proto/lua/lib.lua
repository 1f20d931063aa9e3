-- Shared prelude, prepended to every script when it is loaded.
-- A resource's status changes only through set_status, so the per-status
-- counts of the stack can never drift from the records.

local function now_str()
  local t = redis.call('TIME')
  return string.format('%d.%03d', t[1], math.floor(tonumber(t[2]) / 1000))
end

-- Microseconds: when an action started, so waits measured from it are exact
-- (event times stay at millisecond precision, as documented).
local function now_us_str()
  local t = redis.call('TIME')
  return string.format('%d.%06d', t[1], tonumber(t[2]))
end

local function set_status(res, counts, status)
  local old = redis.call('HGET', res, 'status')
  if old == status then return false end
  if old then
    if redis.call('HINCRBY', counts, old, -1) <= 0 then redis.call('HDEL', counts, old) end
  end
  if status then
    redis.call('HSET', res, 'status', status)
    redis.call('HINCRBY', counts, status, 1)
  end
  return true
end

-- One event: fields are the documented events schema (docs/keyspace.md).
local function add_event(stream, resource, physical_id, action, status, reason, traversal, worker)
  redis.call('XADD', stream, 'MAXLEN', '~', 200000, '*',
    'time', now_str(), 'resource', resource, 'physical_id', physical_id or '',
    'action', action, 'status', status, 'reason', reason or '',
    'traversal', traversal, 'worker', worker or '')
end

local function ends_with(s, suffix)
  return s ~= nil and s ~= false and string.sub(s, -string.len(suffix)) == suffix
end

-- A job for a node the graph of its traversal, current and in progress,
-- does not have is forged or corrupt: it must neither act nor count as done.
-- (Once a traversal settled its graph is gone: those jobs are merely stale.)
local function outside_graph(stack, graph, node, traversal)
  if redis.call('HEXISTS', graph, node) == 1 then return false end
  local st = redis.call('HMGET', stack, 'traversal', 'status')
  return st[1] == traversal and ends_with(st[2], '_IN_PROGRESS')
end

-- The stack's `progress` time: when any of its work last moved. The reaper
-- (stack_reap.lua) re-queues the work of a stack in progress whose progress
-- is older than its threshold. Never creates a stack hash that is gone.
local function touch_progress(stack, t)
  if redis.call('EXISTS', stack) == 1 then redis.call('HSET', stack, 'progress', t) end
end
