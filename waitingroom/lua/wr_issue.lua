-- An admitted shopper takes their pass: the first time is logged (when, and how long they
-- waited since joining) and starts the pass; a later ask gets the same start, so asking again
-- never makes a pass last longer.
-- KEYS: active, admitted log, waits, joined.  ARGV: user id, now, pass seconds.
-- Answers the epoch second the shopper's pass started.
local user, now, pass_seconds = ARGV[1], tonumber(ARGV[2]), tonumber(ARGV[3])
local first = redis.call('ZSCORE', KEYS[2], user)
if first then
  return tonumber(first)
end
redis.call('ZADD', KEYS[2], now, user)
local joined = tonumber(redis.call('ZSCORE', KEYS[4], user) or now)
redis.call('ZADD', KEYS[3], math.max(0, now - joined), user)
redis.call('ZADD', KEYS[1], now + pass_seconds, user)
return now
