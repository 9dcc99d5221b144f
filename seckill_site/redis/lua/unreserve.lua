-- Give a reserved unit back (publish failed, or the database refused the order).
-- Idempotent: only a reservation that still exists returns its unit.
-- KEYS[1] stock, KEYS[2] buyers, KEYS[3] reservations, KEYS[4] result (this user),
-- KEYS[5] tombstone of this request (set when the unit returns, so a late message writes nothing)
-- ARGV[1] user id, ARGV[2] request id, ARGV[3] result to leave ('' deletes it), ARGV[4] result ttl,
-- ARGV[5] '1' to return the unit to the stock counter, '0' when the database has no unit to give
-- Returns 1 when the reservation was released, 0 when it was already gone.
if redis.call('HDEL', KEYS[3], ARGV[2]) == 0 then
  return 0
end
if ARGV[5] == '1' then
  redis.call('INCR', KEYS[1])
  redis.call('SET', KEYS[5], '1', 'EX', ARGV[4])
end
redis.call('SREM', KEYS[2], ARGV[1])
if ARGV[3] == '' then
  redis.call('DEL', KEYS[4])
else
  redis.call('SET', KEYS[4], ARGV[3], 'EX', ARGV[4])
end
return 1
