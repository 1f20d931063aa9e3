-- convergectl: accept a signal for a resource. It is stored here, before
-- the caller publishes its SIGNAL job and answers the user, so an accepted
-- signal is never lost: any later SIGNAL job of the resource applies it.
-- KEYS: 1 stack, 2 res, 3 signals
-- ARGV: 1 id, 2 details
-- id: the signal's id (a retried send with the same id changes nothing);
-- details: the signal's data as JSON ('null' when none was given), kept as
-- written. The signals hash holds per signal d:<id> (details), q:<id> (its
-- order of arrival) and s:<id> (pending, applied or refused), and seq.
-- Returns {'OK', seq} (stored), {'DUP', state} (this id was accepted
-- already; nothing changed), {'UNKNOWN'} (no such stack) or {'GONE'} (the
-- resource has no record: nothing to signal).
if redis.call('EXISTS', KEYS[1]) == 0 then return {'UNKNOWN'} end
if redis.call('HEXISTS', KEYS[2], 'status') == 0 then return {'GONE'} end
local state = redis.call('HGET', KEYS[3], 's:' .. ARGV[1])
if state then return {'DUP', state} end
local seq = redis.call('HINCRBY', KEYS[3], 'seq', 1)
redis.call('HSET', KEYS[3], 'd:' .. ARGV[1], ARGV[2], 'q:' .. ARGV[1], seq,
  's:' .. ARGV[1], 'pending')
return {'OK', tostring(seq)}
