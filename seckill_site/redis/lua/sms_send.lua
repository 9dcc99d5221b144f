-- May a text message go to this number now? Checks and counts in one step, so two nodes
-- cannot both send within the resend interval.
-- KEYS[1] the number's resend mark, KEYS[2] its daily count (one hash tag: the number).
-- ARGV: resend seconds, day seconds, messages per day.
-- Returns {0, resend seconds} when the message may go, {1, seconds} while the resend mark
-- lasts, {2, seconds} when the daily cap is reached.
if redis.call('EXISTS', KEYS[1]) == 1 then
  return {1, redis.call('TTL', KEYS[1])}
end
local sent = tonumber(redis.call('GET', KEYS[2]) or '0')
if sent >= tonumber(ARGV[3]) then
  return {2, redis.call('TTL', KEYS[2])}
end
redis.call('SET', KEYS[1], 1, 'EX', ARGV[1])
if redis.call('INCR', KEYS[2]) == 1 then
  redis.call('EXPIRE', KEYS[2], ARGV[2])
end
return {0, tonumber(ARGV[1])}
