-- Uncount one message the shop's hour took but did not send (sms_shop_hour_take.lua), only
-- while that hour's count exists: a DECR after the hour turned would make a key without a TTL.
-- KEYS[1] the shop's count for the hour. Returns the count after, or -1 when there was none.
if redis.call('EXISTS', KEYS[1]) == 0 then
  return -1
end
return redis.call('DECR', KEYS[1])
