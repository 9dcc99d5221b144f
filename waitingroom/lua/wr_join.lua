-- A shopper joins a sale's waiting room; idempotent per shopper.
-- KEYS: queue, pre-queue, tail, joined, seed.  ARGV: user id, now, opens at, starts at (epoch s).
-- Answers {state, place}: 1 placed (place in line), 0 in the pre-queue (placed by the
-- shuffle at the start), -1 the start has come but the pre-queue is not shuffled yet (the
-- caller shuffles, then joins again), -2 the room is not open yet.
local user, now = ARGV[1], tonumber(ARGV[2])
local opens, starts = tonumber(ARGV[3]), tonumber(ARGV[4])
local place = redis.call('ZSCORE', KEYS[1], user)
if place then
  return {1, tonumber(place)}
end
local shuffled = redis.call('HEXISTS', KEYS[5], 'shuffled') == 1
if not shuffled then
  if now < starts then
    -- No pre-queue (opens at 0 or not before the start): the room opens at the start.
    if opens == 0 or opens >= starts or now < opens then
      return {-2, 0}
    end
    redis.call('SADD', KEYS[2], user)
    redis.call('ZADD', KEYS[4], 'NX', now, user)
    return {0, 0}
  end
  if redis.call('SISMEMBER', KEYS[2], user) == 1 or redis.call('SCARD', KEYS[2]) > 0 or starts > 0 then
    return {-1, 0}
  end
end
-- First come, first served after the shuffle: places after the pre-queue's.
local taken = redis.call('INCR', KEYS[3])
redis.call('ZADD', KEYS[1], taken, user)
redis.call('ZADD', KEYS[4], 'NX', now, user)
return {1, taken}
