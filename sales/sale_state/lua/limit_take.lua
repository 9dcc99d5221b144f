-- One shopper's per-sale limit (captchas drawn or paths taken), counted in one round trip.
-- KEYS[1] the shopper's counter for this sale and action, KEYS[2] the sale's refusal tally
-- (a hash): both carry the sale's hash tag, or both the shopper's entry shard's in a draw sale
-- with several (keys.captcha), so this stays in one Redis Cluster slot.
-- ARGV: limit, window seconds, tally field, tally TTL seconds.
-- Returns 0 when the request is within the limit, else the seconds until the window ends.
local count = redis.call('INCR', KEYS[1])
if count == 1 then
  redis.call('EXPIRE', KEYS[1], ARGV[2])
end
if count <= tonumber(ARGV[1]) then
  return 0
end
redis.call('HINCRBY', KEYS[2], ARGV[3], 1)
redis.call('EXPIRE', KEYS[2], ARGV[4])
local ttl = redis.call('TTL', KEYS[1])
if ttl < 1 then
  ttl = 1
end
return ttl
