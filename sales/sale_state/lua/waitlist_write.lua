-- Transition: the waiting list's counter <- what its owner read from the database after a
-- commit (orders.reoffer.waitlist_publish). Turns only grow (offers walk the list in order), so
-- the larger is kept whatever order two writers arrive in; the units unpaid go up and down, so
-- they are taken only from a read newer than the stored one (its stamp, taken before the read).
-- KEYS[1] the list's hash.
-- ARGV[1] length, ARGV[2] turns, ARGV[3] units unpaid, ARGV[4] stamp.
-- Returns 1 when the units unpaid were taken, 0 when a newer read had stored them.
redis.call('HSET', KEYS[1], 'length', ARGV[1])
local turns = tonumber(redis.call('HGET', KEYS[1], 'turns') or '0')
if tonumber(ARGV[2]) > turns then
  redis.call('HSET', KEYS[1], 'turns', ARGV[2])
end
local stamp = tonumber(redis.call('HGET', KEYS[1], 'read') or '0')
if tonumber(ARGV[4]) <= stamp then
  return 0
end
redis.call('HSET', KEYS[1], 'read', ARGV[4], 'unpaid', ARGV[3])
return 1
