-- Puts a traversal's graph in place and records that it is: the resource
-- definitions and graph entries were written to draft keys of this one
-- expansion, and become the traversal's only if no other expansion of it
-- (a redelivered or duplicated STACK job) got there first. Once jobs run on
-- a graph it never changes: a second expansion computed later from a moved
-- index would otherwise rewrite successors and counts under running jobs.
-- Also stores the parameters as the template resolved them (defaults
-- applied, typed): what every check job of the traversal reads. A nested
-- stack's definition holds its parent's property values until then.
-- KEYS: 1 stack, 2 def, 3 rdef, 4 graph, 5 rdef_draft, 6 graph_draft
-- ARGV: 1 traversal, 2 nodes, 3 params
-- nodes: the number of graph nodes; params: the resolved parameters json.
-- Returns {'OK'}; {'DUP', root...} when the traversal was expanded already
-- (its roots, for the caller to publish again: the expansion that won may
-- have died before it did); {'STALE'} when a newer traversal started
-- meanwhile; {'SETTLED'} when the stack is no longer in progress.
local function drop_drafts() redis.call('DEL', KEYS[5], KEYS[6]) end
local function put(draft, key)
  if redis.call('EXISTS', draft) == 1 then
    redis.call('RENAME', draft, key)
  else
    redis.call('DEL', key)
  end
end
local st = redis.call('HMGET', KEYS[1], 'traversal', 'status', 'expanded')
if st[1] ~= ARGV[1] then drop_drafts() return {'STALE'} end
if not ends_with(st[2], '_IN_PROGRESS') then drop_drafts() return {'SETTLED'} end
if st[3] == ARGV[1] then
  drop_drafts()
  local out, entries = {'DUP'}, redis.call('HGETALL', KEYS[4])
  for i = 1, #entries, 2 do
    if cjson.decode(entries[i + 1]).p == 0 then out[#out + 1] = entries[i] end
  end
  return out
end
put(KEYS[5], KEYS[3])
put(KEYS[6], KEYS[4])
redis.call('HSET', KEYS[2], 'params', ARGV[3])
redis.call('HSET', KEYS[1], 'total', ARGV[2], 'expanded', ARGV[1], 'progress', now_str())
return {'OK'}
