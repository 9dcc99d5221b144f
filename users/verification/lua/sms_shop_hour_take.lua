-- May the shop send one more text message this hour? Checks and counts in one step, so two
-- senders cannot both take the last message of the budget, and a refused message is not
-- counted (it was not sent). Codes may take the whole hour's cap; notices stop short of it,
-- leaving a reserve to the codes (users.verification.services).
-- KEYS[1] the shop's count for the hour.
-- ARGV: the messages this sender may see counted in the hour, the key's TTL in seconds.
-- Returns {0, count after} when the message may go (counted), {1, count} when not.
local sent = tonumber(redis.call('GET', KEYS[1]) or '0')
if sent >= tonumber(ARGV[1]) then
  return {1, sent}
end
sent = redis.call('INCR', KEYS[1])
if sent == 1 then
  redis.call('EXPIRE', KEYS[1], ARGV[2])
end
return {0, sent}
