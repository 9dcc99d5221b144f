-- May the shop text this number once more today? Checks and counts in one step, so two
-- senders cannot both take the last message of the number's day.
-- KEYS[1] the number's daily count (sms_send.lua counts codes in it too).
-- ARGV: messages per number per day, day seconds.
-- Returns {0, 0} when the message may go (counted), {1, seconds left of the day} when not.
local sent = tonumber(redis.call('GET', KEYS[1]) or '0')
if sent >= tonumber(ARGV[1]) then
  return {1, redis.call('TTL', KEYS[1])}
end
if redis.call('INCR', KEYS[1]) == 1 then
  redis.call('EXPIRE', KEYS[1], ARGV[2])
end
return {0, 0}
