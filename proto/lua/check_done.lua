-- Engine: an action whose resource settled at once, recorded and its node
-- done in one step. When the type's look right after its action says
-- COMPLETE (OS::Heat::None, OS::Heat::Value, OS::Heat::RandomString, ...:
-- cv_check_settled), no observer needs to look: this writes what
-- check_finish.lua and then node_done.lua would have written, both events
-- included, fenced by the record version read under the lease, and
-- releases the lease.
-- KEYS: 1 stack, 2 res, 3 lease, 4 events, 5 counts, 6 index, 7 ledger,
--       8 done, 9 publishing
-- ARGV: 1 traversal, 2 node, 3 resource, 4 version, 5 token, 6 worker,
--       7 action, 8 reason, 9 status, 10 done_reason, 11 physical_id,
--       12 uuid, 13 type, 14 props, 15 attrs, 16 data, 17 dependencies,
--       18 policy, 19 old, 20 events, 21 declared_type, 22 pass
-- Variadic: KEYS from 10 are the successors' sync points, ARGV from 23
-- their node names, in the same order (as node_done.lua).
-- version: read under the lease; token: the lease's; reason: of the
-- IN_PROGRESS event; status: the resource's once settled
-- (<ACTION>_COMPLETE); done_reason: of the COMPLETE event and the record;
-- attrs, data: as the look left them; dependencies: json ('' = keep the
-- index entry); old: replaced versions json ('' = keep); events: extra
-- events of the action, a json list of {"physical_id", "action",
-- "status", "reason"} ('' = none); declared_type: the type the template
-- wrote (the record's and the events'; `type` is the one that implements
-- it); pass: data passed to the successors.
-- The node joins the publishing set (node_done.lua's publishing '1'): the
-- caller has no other job that would publish its successors again (or end
-- the traversal: a node without successors joins only when it is the last).
-- Returns node_done.lua's answers: {'OK', added, done, total, a1, n1, d1,
-- ...}, STALE or SETTLED (the record is written, as check_finish.lua
-- would have), or {'FENCED', current version} (nothing written).
local t, t_us = now_strs()
local deltas = {}
local fenced = record_settled(KEYS[2], KEYS[3], KEYS[4], KEYS[6], KEYS[7], ARGV, t, t_us, deltas)
if fenced then return {'FENCED', fenced} end
apply_counts(KEYS[5], deltas)
local st = redis.call('HMGET', KEYS[1], 'traversal', 'status', 'total', 'progress')
if not st[1] and not st[2] then return {'STALE', ''} end
-- The reaper's sign of life, kept to a tenth of a second: thousands of
-- resources a second need not each rewrite it.
if not tonumber(st[4]) or tonumber(t) - tonumber(st[4]) >= 0.1 then
  redis.call('HSET', KEYS[1], 'progress', t)
end
if st[1] ~= ARGV[1] then return {'STALE', st[1]} end
if not ends_with(st[2], '_IN_PROGRESS') then return {'SETTLED', st[2] or ''} end
return mark_done(KEYS[1], KEYS[8], KEYS[9], ARGV[2], ARGV[22], true, tonumber(st[3]), 23)
