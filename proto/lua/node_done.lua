-- Marks a graph node done for its traversal and satisfies its successors'
-- sync points (set semantics: HSETNX of the predecessor, so a duplicate
-- never double-counts). The record is updated first, fenced by version.
-- KEYS: 1 stack, 2 res, 3 done, 4 events, 5 counts, 6 index, 7 lease,
--       8 graph, 9 publishing
-- ARGV: 1 traversal, 2 node, 3 version, 4 status, 5 attrs, 6 reason, 7 pass,
--       8 worker, 9 resource, 10 physical_id, 11 action, 12 data, 13 old,
--       14 events, 15 lease_token, 16 publishing
-- Variadic: KEYS from 10 are the successors' sync points, ARGV from 17
-- their node names, in the same order.
-- version: expected ('' = any); status: new ('' = unchanged, 'DELETED' =
-- remove the record); attrs ('' = keep); pass: data passed to successors;
-- action: of the event; data: json ('' = keep); old: replaced versions json
-- ('' = keep); events: extra events, a json list of {"physical_id",
-- "action", "status", "reason"} ('' = none); lease_token: the caller's
-- ('' = holds none): the lease is released here, before any successor
-- (such as this resource's cleanup) is told; publishing: '1' when the
-- caller (an engine) has no other job that would do this again should it
-- die before its successors' jobs are published: the node joins the
-- publishing set until the caller says they are (a node without
-- successors only when it is the last one done: its caller ends the
-- traversal).
-- Returns {'OK', added, done, total, a1, n1, d1, a2, n2, d2, ...} (aK: this
-- call added to successor K's set, nK: its size now, dK: 1 when successor K
-- is itself done already), or FENCED / STALE / SETTLED, or NONODE: the
-- traversal's graph has no such node (a forged job), nothing is written.
if outside_graph(KEYS[1], KEYS[8], ARGV[2], ARGV[1]) then return {'NONODE'} end
if ARGV[3] ~= '' then
  local ver = redis.call('HGET', KEYS[2], 'version')
  if (ver or '0') ~= ARGV[3] then return {'FENCED', ver or '0'} end
end
local status = ARGV[4]
-- A node done again after its record was deleted (a redelivered cleanup)
-- must not bring back a record of stray fields.
local exists = redis.call('EXISTS', KEYS[2]) == 1
local rtype = exists and declared_type(KEYS[2]) or ''
if status == 'DELETED' then
  if exists then
    set_status(KEYS[2], KEYS[5], false)
    redis.call('DEL', KEYS[2])
    redis.call('HDEL', KEYS[6], ARGV[9])
    add_event(KEYS[4], ARGV[9], ARGV[10], ARGV[11], 'COMPLETE', ARGV[6], ARGV[1], ARGV[8], nil,
      rtype)
  end
elseif status ~= '' and exists then
  if set_status(KEYS[2], KEYS[5], status) then
    redis.call('HSET', KEYS[2], 'reason', ARGV[6], 'updated', now_str())
    add_event(KEYS[4], ARGV[9], ARGV[10], ARGV[11], 'COMPLETE', ARGV[6], ARGV[1], ARGV[8], nil,
      rtype)
  end
end
if status ~= 'DELETED' and exists then
  if ARGV[5] ~= '' then redis.call('HSET', KEYS[2], 'attrs', ARGV[5]) end
  if ARGV[12] ~= '' then redis.call('HSET', KEYS[2], 'data', ARGV[12]) end
  if ARGV[13] ~= '' then redis.call('HSET', KEYS[2], 'old', ARGV[13]) end
end
if ARGV[14] ~= '' then
  for _, e in ipairs(cjson.decode(ARGV[14])) do
    add_event(KEYS[4], ARGV[9], e.physical_id, e.action, e.status, e.reason, ARGV[1], ARGV[8],
      nil, e.type or rtype)
  end
end
if ARGV[15] ~= '' and redis.call('GET', KEYS[7]) == ARGV[15] then redis.call('DEL', KEYS[7]) end
local st = redis.call('HMGET', KEYS[1], 'traversal', 'status', 'total')
if st[1] ~= ARGV[1] then return {'STALE', st[1] or ''} end
if not ends_with(st[2], '_IN_PROGRESS') then return {'SETTLED', st[2] or ''} end
redis.call('HSET', KEYS[1], 'progress', now_str())
return mark_done(KEYS[1], KEYS[3], KEYS[9], ARGV[2], ARGV[7], ARGV[16] == '1', tonumber(st[3]), 17)
