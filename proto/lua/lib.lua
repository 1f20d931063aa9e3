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

-- Both of the above from one TIME: a script that writes several times uses one.
local function now_strs()
  local t = redis.call('TIME')
  return string.format('%d.%03d', t[1], math.floor(tonumber(t[2]) / 1000)),
    string.format('%d.%06d', t[1], tonumber(t[2]))
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
-- t: its time (now_str(); nil reads the clock). The stream keeps about the
-- last `events_max` events (--max-events-per-stack, Heat's
-- max_events_per_stack; 0: all of them): the loader defines that number
-- in a line of its own before this prelude (cv_redis_script_text). `~`
-- trims whole stream nodes, so the stream holds at least that many and a
-- trim costs O(1) amortised. rtype: the resource's type as the template
-- wrote it (Heat's resource_type; STACK_TYPE for a stack event); nil or ''
-- leaves the field out. begun: the reason of the action's IN_PROGRESS event
-- when this COMPLETE one settles it at the same time: the entry then stands
-- for both, and every reader shows the two (docs/keyspace.md); nil for an
-- entry that is one event.
local function add_event(stream, resource, physical_id, action, status, reason, traversal, worker,
                         t, rtype, begun)
  local fields = {'*', 'time', t or now_str(), 'resource', resource,
    'physical_id', physical_id or '', 'action', action, 'status', status, 'reason', reason or '',
    'traversal', traversal, 'worker', worker or ''}
  if rtype and rtype ~= '' then
    fields[#fields + 1] = 'type'
    fields[#fields + 1] = rtype
  end
  if begun then
    fields[#fields + 1] = 'begun'
    fields[#fields + 1] = begun
  end
  if events_max > 0 then
    redis.call('XADD', stream, 'MAXLEN', '~', events_max, unpack(fields))
  else
    redis.call('XADD', stream, unpack(fields))
  end
end

-- The type of a stack's own events, as Heat's stack events name it.
local STACK_TYPE = 'OS::Heat::Stack'

-- The type a resource record reports (the template's, before the
-- registry mapped it): `declared_type`, or `type` in a record written
-- before it was kept; '' when there is no record.
local function declared_type(res)
  local v = redis.call('HMGET', res, 'declared_type', 'type')
  if v[1] and v[1] ~= '' then return v[1] end
  return v[2] or ''
end

-- Another key of the stack whose `stack` key is given: '<prefix>{<id>}:' ..
-- suffix (cv_keys.h), in the same Redis Cluster slot.
local function stack_key(stack, suffix)
  return string.sub(stack, 1, -6) .. suffix
end

-- A traversal that ended or was superseded: its keys (rdef, graph, done,
-- publishing, sync points) are garbage from now on, and `gc` lists it
-- until a worker's sweep (traversal_sweep.lua) removed them in bounded
-- batches. Jobs of the traversal still under way answer STALE or SETTLED
-- before they read or write any of those keys.
local function retire_traversal(stack, traversal)
  if tonumber(traversal) and tonumber(traversal) > 0 then
    redis.call('SADD', stack_key(stack, 'gc'), traversal)
  end
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

-- Begins a traversal of `kind` (CREATE, UPDATE, DELETE, ROLLBACK) on a stack
-- whose definition is in place: the traversal id moves on, so every job of
-- the previous one stops at a safe point; the stack becomes
-- <kind>_IN_PROGRESS with nothing expanded, and the event says so. ROLLBACK
-- first restores the last definition that reached COMPLETE (none: an empty
-- one, which removes everything). stack_begin.lua begins every traversal
-- this way, and node_failed.lua a failure's rollback in the same step as the
-- failure. rerun: a worker's re-run of a traversal that found records made
-- behind its back (stack_finish.lua AGAIN; `reruns` keeps counting).
-- Returns the new traversal.
local function begin_traversal(stack, def, events, kind, client, t, rerun)
  if kind == 'ROLLBACK' then
    local c = redis.call('HMGET', def, 'complete_template', 'complete_params', 'complete_files',
      'complete_env')
    redis.call('HSET', def,
      'template', c[1] or '{"heat_template_version":"2013-05-23","resources":{}}',
      'params', c[2] or '{}', 'files', c[3] or '{}', 'env', c[4] or '{}')
  end
  local trav = redis.call('HINCRBY', stack, 'traversal', 1)
  retire_traversal(stack, trav - 1)
  local reason = 'Stack ' .. kind .. ' started'
  redis.call('HSET', stack, 'action', kind, 'status', kind .. '_IN_PROGRESS', 'reason', reason,
    'updated', t, 'total', 0, 'done', 0)
  redis.call('HDEL', stack, 'expanded')
  if not rerun then redis.call('HDEL', stack, 'reruns') end
  local s = redis.call('HMGET', stack, 'name', 'id')
  add_event(events, s[1], s[2], kind, 'IN_PROGRESS', reason, tostring(trav), client, t,
    STACK_TYPE)
  return trav
end

-- The worker id and incarnation a lease holder names: "<id>@<incarnation>"
-- followed by ":<n>" or nothing (docs/architecture.md "Delivery, leases,
-- fencing"). A worker id never contains '@'; a value without one (written
-- by an older worker) names no incarnation: nil, nil.
local function lease_holder(value)
  local at = string.find(value, '@', 1, true)
  if not at then return nil, nil end
  local colon = string.find(value, ':', at + 1, true)
  return string.sub(value, 1, at - 1), string.sub(value, at + 1, (colon or 0) - 1)
end

-- Whether lease value `held` is a dead process's, as seen by the caller
-- holding `token`: it names the caller's own worker id with another
-- incarnation. Worker ids are unique among running workers, so that process
-- has died and the caller, its restart, takes the lease over at once instead
-- of waiting for it to run out. Should the premise be broken (two processes
-- started with one id), the earlier one's renewals and fenced writes fail
-- on the token compare, as after any lost lease.
local function lease_holder_gone(held, token)
  local held_id, held_inc = lease_holder(held)
  local id, inc = lease_holder(token)
  return held_id ~= nil and held_id == id and held_inc ~= inc
end

-- A node done for its traversal (node_done.lua, check_done.lua): in the done
-- set and counted once; in the publishing set when the caller asks and there
-- is anything to publish again (successors, or the traversal's end); each
-- successor's sync point satisfied with `pass` (KEYS from 10, their node
-- names in ARGV from `names_at`). Returns node_done's OK reply: {'OK',
-- added, done, total, a1, n1, d1, ...}.
local function mark_done(stack, done_key, publishing_key, node, pass, publishing, total, names_at)
  local added = redis.call('SADD', done_key, node)
  local done
  if added == 1 then
    done = redis.call('HINCRBY', stack, 'done', 1)
  else
    done = tonumber(redis.call('HGET', stack, 'done'))
  end
  if publishing and (#KEYS >= 10 or done >= total) then
    redis.call('SADD', publishing_key, node)
  end
  local out = {'OK', added, done, total}
  for i = 10, #KEYS do
    out[#out + 1] = redis.call('HSETNX', KEYS[i], node, pass)
    out[#out + 1] = redis.call('HLEN', KEYS[i])
    out[#out + 1] = redis.call('SISMEMBER', done_key, ARGV[names_at + i - 10])
  end
  return out
end

-- The record of an action that settled at once, with both events and the
-- lease released (check_done.lua, check_done_many.lua). A is check_done's
-- ARGV for the node (traversal, node, resource, version, token, worker,
-- action, reason, status, done_reason, physical_id, uuid, type, props, attrs,
-- data, dependencies, policy, old, events, declared_type, pass); t, t_us: now_strs(). The
-- status counts move in `deltas` (apply_counts writes them). Fenced by the
-- version read under the lease: returns the record's version, nothing
-- written, when it moved on; nil when written.
local function record_settled(res, lease, events, index, ledger, A, t, t_us, deltas)
  local cur = redis.call('HMGET', res, 'version', 'status')
  local ver = tonumber(cur[1] or '0')
  if ver == tonumber(A[4]) then
    if A[7] == 'CREATE' and A[12] ~= '' then
      redis.call('HINCRBY', ledger, 'create:' .. A[12], 1)
    end
    if cur[2] ~= A[9] then
      if cur[2] then deltas[#deltas + 1] = {cur[2], -1} end
      deltas[#deltas + 1] = {A[9], 1}
    end
    redis.call('HSET', res, 'status', A[9], 'version', ver + 1, 'updated', t, 'worker', A[6],
      'action', A[7], 'reason', A[10], 'physical_id', A[11], 'uuid', A[12], 'type', A[13],
      'props', A[14], 'attrs', A[15], 'data', A[16], 'traversal', A[1], 'started', t_us,
      'policy', A[18], 'declared_type', A[21])
    if A[19] ~= '' then redis.call('HSET', res, 'old', A[19]) end
    if A[17] ~= '' then redis.call('HSET', index, A[3], A[17]) end
    -- extra events marked "first" before the action's own (check_finish.lua)
    local extra = A[20] ~= '' and cjson.decode(A[20]) or {}
    local between = false
    local function add_extra(first)
      for _, e in ipairs(extra) do
        if (e.first == true) == first then
          add_event(events, A[3], e.physical_id, e.action, e.status, e.reason, A[1], A[6], t,
            e.type or A[21])
        end
        between = between or e.first ~= true
      end
    end
    add_extra(true)
    -- The action's IN_PROGRESS and COMPLETE in one entry, unless events
    -- stand between them.
    if between then
      add_event(events, A[3], A[11], A[7], 'IN_PROGRESS', A[8], A[1], A[6], t, A[21])
      add_extra(false)
      add_event(events, A[3], A[11], A[7], 'COMPLETE', A[10], A[1], A[6], t, A[21])
    else
      add_event(events, A[3], A[11], A[7], 'COMPLETE', A[10], A[1], A[6], t, A[21], A[8])
    end
  end
  if redis.call('GET', lease) == A[5] then redis.call('DEL', lease) end
  if ver ~= tonumber(A[4]) then return tostring(ver) end
  return nil
end

-- Writes the status counts record_settled moved: net per status, in the
-- order they came; a count that reaches 0 is removed.
local function apply_counts(counts, deltas)
  local net, order = {}, {}
  for _, d in ipairs(deltas) do
    if not net[d[1]] then order[#order + 1] = d[1] end
    net[d[1]] = (net[d[1]] or 0) + d[2]
  end
  for _, status in ipairs(order) do
    if net[status] ~= 0 and redis.call('HINCRBY', counts, status, net[status]) <= 0 then
      redis.call('HDEL', counts, status)
    end
  end
end
