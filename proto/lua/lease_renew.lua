-- Extends a lease only if the caller still holds it (compare-and-PEXPIRE):
-- a holder that lost its lease (it expired while the holder was paused, and
-- another worker may have taken it) must not extend someone else's.
-- KEYS: 1 lease
-- ARGV: 1 token, 2 lease_ms
-- Returns 1 if renewed, else 0.
if redis.call('GET', KEYS[1]) == ARGV[1] then
  return redis.call('PEXPIRE', KEYS[1], ARGV[2])
end
return 0
