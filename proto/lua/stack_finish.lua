-- Ends a traversal that has done every node: the stack becomes
-- <ACTION>_COMPLETE with its resolved outputs (or _FAILED). A complete
-- create, update or rollback makes its definition the one rollback returns
-- to.
-- A traversal ends only when no record was made behind its back. An action
-- of an older traversal that passed check_begin while that traversal was
-- current finishes and is recorded (as in Heat), possibly after this
-- traversal's expansion read the index: this graph then has no cleanup node
-- for the resource, and nothing in it deletes the record (a resource the
-- definition dropped, a version replaced since). So, before COMPLETE:
-- * an older action still under way (the lease of a resource of the stored
--   or last complete definition, with no record yet, is held) may record
--   after the end: BUSY, the traversal stays in progress and the reaper
--   ends it again once the stack's progress stalled;
-- * a DELETE that finds records left, or an UPDATE or ROLLBACK that finds a
--   record whose resource has no cleanup node `c/<resource>` in this
--   traversal's graph and needs one (the resource left the definition: no
--   update node `u/<resource>`; or it holds replaced versions to delete):
--   AGAIN, and this script begins, in the same step (begin_traversal,
--   lib.lua), another traversal of the same kind with the stored
--   definition (an UPDATE keeps the stored template, a ROLLBACK restores the
--   same last complete one), whose graph has the cleanup nodes; the caller
--   publishes its STACK job (lost, the reaper re-queues it). Begun here, the
--   re-run can never supersede a traversal an operator began meanwhile.
--   A CREATE is the first traversal: nothing is recorded behind its back.
-- Bounded: at most 3 re-runs in a row (the stack's `reruns`), then the
-- traversal fails with a reason naming the records.
-- Cost: O(index + the definition's resources) once per traversal, never per
-- resource.
-- The traversal that ends (OK) or is re-run (AGAIN) joins the stack's `gc`
-- set: its keys are garbage (lib.lua retire_traversal).
-- KEYS: 1 stack, 2 events, 3 def, 4 index, 5 graph (this traversal's)
-- ARGV: 1 traversal, 2 status, 3 reason, 4 outputs, 5 worker, 6 lease_prefix,
--       7 res_prefix
-- status: the status suffix (COMPLETE|FAILED); outputs: json; lease_prefix,
-- res_prefix: the key of a resource's lease / record without its name.
-- Returns {'OK', action}, {'AGAIN', re-run traversal}, {'BUSY', resource},
-- or STALE / SETTLED.
local st = redis.call('HMGET', KEYS[1], 'traversal', 'status', 'action', 'name', 'id')
if st[1] ~= ARGV[1] then return {'STALE', st[1] or ''} end
if not ends_with(st[2], '_IN_PROGRESS') then return {'SETTLED', st[2]} end

-- A resource of the definitions this stack has known, with no record and a
-- held lease: an action of an older traversal not yet recorded.
local function unrecorded_action()
  local defs = redis.call('HMGET', KEYS[3], 'template', 'complete_template')
  for _, text in ipairs(defs) do
    local ok, tpl = pcall(cjson.decode, text or '')
    if ok and type(tpl) == 'table' and type(tpl.resources) == 'table' then
      for name, _ in pairs(tpl.resources) do
        if redis.call('HEXISTS', KEYS[4], name) == 0 and
           redis.call('EXISTS', ARGV[6] .. name) == 1 then
          return name
        end
      end
    end
  end
  return nil
end

-- Records this traversal's graph does not clean up and that need it: with
-- no cleanup node, a resource not in this definition (no update node), or
-- one with replaced versions to delete. (A resource of the definition that
-- got its record late and holds no replaced version needs nothing more.)
local function behind_its_back()
  local names = redis.call('HKEYS', KEYS[4])
  if st[3] == 'DELETE' then return names end
  local late = {}
  for _, name in ipairs(names) do
    if redis.call('HEXISTS', KEYS[5], 'c/' .. name) == 0 then
      local old = redis.call('HGET', ARGV[7] .. name, 'old')
      if redis.call('HEXISTS', KEYS[5], 'u/' .. name) == 0 or
         (old and old ~= '' and old ~= '[]') then
        late[#late + 1] = name
      end
    end
  end
  return late
end

if ARGV[2] == 'COMPLETE' and st[3] ~= 'CREATE' then
  local acting = unrecorded_action()
  if acting then return {'BUSY', acting} end
  local late = behind_its_back()
  if #late > 0 then
    if redis.call('HINCRBY', KEYS[1], 'reruns', 1) <= 3 then
      return {'AGAIN', begin_traversal(KEYS[1], KEYS[3], KEYS[2], st[3], ARGV[5], now_str(), true)}
    end
    ARGV[2] = 'FAILED'
    table.sort(late)
    ARGV[3] = (st[3] == 'DELETE' and 'records remain after delete: ' or
      'records made behind its back remain after ' .. string.lower(st[3]) .. ': ') ..
      table.concat(late, ', ')
  end
end
if ARGV[2] == 'COMPLETE' and st[3] ~= 'DELETE' then
  local d = redis.call('HMGET', KEYS[3], 'template', 'params', 'files', 'env')
  redis.call('HSET', KEYS[3], 'complete_template', d[1], 'complete_params', d[2],
    'complete_files', d[3] or '{}', 'complete_env', d[4] or '{}')
end
redis.call('HSET', KEYS[1], 'status', st[3] .. '_' .. ARGV[2], 'reason', ARGV[3],
  'outputs', ARGV[4], 'updated', now_str())
add_event(KEYS[2], st[4], st[5], st[3], ARGV[2], ARGV[3], ARGV[1], ARGV[5], nil, STACK_TYPE)
retire_traversal(KEYS[1], ARGV[1])
return {'OK', st[3]}
