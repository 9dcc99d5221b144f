-- May a text message go to this number for this requester now? Checks and counts in one
-- step, so two nodes cannot both send within the resend interval.
-- Every limit on the number is per requester (a client IP, an IPv6 /64): a stranger spends
-- only their own budget for someone else's number, never its owner's. Across requesters,
-- a daily cap far above a person's needs bounds what one phone can be sent; requesters that
-- once proved they receive the number's messages (they entered a code sent to them) are
-- exempt from it, so the owner on a network they used before is never locked out.
-- KEYS (one hash tag: the number): [1] this requester's resend mark, [2] this requester's
-- daily count, [3] the number's daily count, [4] the set of the number's known requesters.
-- ARGV: resend seconds, day seconds, messages per requester per day, messages per number
-- per day, the requester.
-- Returns {0, resend seconds} when the message may go; {1, seconds} while the resend mark
-- lasts; {2, seconds} when this requester's daily cap is reached; {3, seconds} when the
-- number's daily cap is reached (a requester it does not know).
if redis.call('EXISTS', KEYS[1]) == 1 then
  return {1, redis.call('TTL', KEYS[1])}
end
local mine = tonumber(redis.call('GET', KEYS[2]) or '0')
if mine >= tonumber(ARGV[3]) then
  return {2, redis.call('TTL', KEYS[2])}
end
local all = tonumber(redis.call('GET', KEYS[3]) or '0')
if all >= tonumber(ARGV[4]) and redis.call('SISMEMBER', KEYS[4], ARGV[5]) == 0 then
  return {3, redis.call('TTL', KEYS[3])}
end
redis.call('SET', KEYS[1], 1, 'EX', ARGV[1])
if redis.call('INCR', KEYS[2]) == 1 then
  redis.call('EXPIRE', KEYS[2], ARGV[2])
end
if redis.call('INCR', KEYS[3]) == 1 then
  redis.call('EXPIRE', KEYS[3], ARGV[2])
end
return {0, tonumber(ARGV[1])}
