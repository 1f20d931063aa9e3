-- Engine: check_done.lua for several nodes of one traversal that settled at
-- once together (the jobs one message carried), none of them with
-- successors: each recorded and done exactly as check_done.lua records and
-- marks one, with the clock read once, the stack read once and its counts
-- written once for all of them.
-- KEYS: 1 stack, 2 events, 3 counts, 4 index, 5 ledger, 6 done, 7 publishing
-- ARGV: 1 traversal
-- Variadic: per node two KEYS from 8 (its res, its lease) and two ARGV from
-- 2 (its node name; check_done.lua's ARGV for it, joined by the byte 0xff,
-- which UTF-8 text never holds).
-- Returns one reply per node, in order, each check_done.lua's: {'OK',
-- added, done, total}, STALE or SETTLED (recorded all the same), or
-- {'FENCED', current version} (nothing written for that node). A node joins
-- the publishing set only as the traversal's last (check_done.lua's rule
-- for a node without successors).
local function fields(joined)
  local f, at = {}, 1
  while true do
    local sep = string.find(joined, '\255', at, true)
    f[#f + 1] = string.sub(joined, at, (sep or 0) - 1)
    if not sep then return f end
    at = sep + 1
  end
end
local t, t_us = now_strs()
local deltas, out, nodes = {}, {}, {}
for i = 8, #KEYS, 2 do
  local a = 2 + (i - 8)
  local fenced = record_settled(KEYS[i], KEYS[i + 1], KEYS[2], KEYS[4], KEYS[5],
    fields(ARGV[a + 1]), t, t_us, deltas)
  out[#out + 1] = fenced and {'FENCED', fenced} or false
  nodes[#nodes + 1] = ARGV[a]
end
apply_counts(KEYS[3], deltas)
local st = redis.call('HMGET', KEYS[1], 'traversal', 'status', 'total', 'progress', 'done')
local answer
if not st[1] and not st[2] then
  answer = {'STALE', ''}
else
  if not tonumber(st[4]) or tonumber(t) - tonumber(st[4]) >= 0.1 then
    redis.call('HSET', KEYS[1], 'progress', t)
  end
  if st[1] ~= ARGV[1] then
    answer = {'STALE', st[1]}
  elseif not ends_with(st[2], '_IN_PROGRESS') then
    answer = {'SETTLED', st[2] or ''}
  end
end
local total, done, added_all = tonumber(st[3]), tonumber(st[5] or '0'), 0
for i, node in ipairs(nodes) do
  if not out[i] then
    if answer then
      out[i] = answer
    else
      local added = redis.call('SADD', KEYS[6], node)
      done = done + added
      added_all = added_all + added
      if done >= total then redis.call('SADD', KEYS[7], node) end
      out[i] = {'OK', added, done, total}
    end
  end
end
if added_all > 0 then redis.call('HINCRBY', KEYS[1], 'done', added_all) end
return out
