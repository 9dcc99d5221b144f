-- The batch writer wrote (or found) the orders of some reservations: record each shopper's
-- answer, drop those reservations, and say whether the sale needs another batch.
-- KEYS[1] reservations, KEYS[2] flush mark, KEYS[3 ..] result key of each written reservation
-- ARGV[1] result ttl, ARGV[2] flush mark lifetime in ms, then pairs: request id, order id
-- (one pair per result key, in the same order).
-- Returns the reservations left. With none left the flush mark goes in the same step, so a buy
-- that comes after it publishes a new flush, and one that came before is in this count: no
-- reservation is left without a flush on its way. With some left the mark is renewed, and the
-- caller drains them.
for i = 3, #KEYS do
  local at = 3 + (i - 3) * 2
  redis.call('HDEL', KEYS[1], ARGV[at])
  redis.call('SET', KEYS[i], ARGV[at + 1], 'EX', ARGV[1])
end
local left = redis.call('HLEN', KEYS[1])
if left == 0 then
  redis.call('DEL', KEYS[2])
else
  redis.call('SET', KEYS[2], '1', 'PX', ARGV[2])
end
return left
