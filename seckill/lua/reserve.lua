-- Hand out one unit of a sale to one user, atomically.
-- KEYS[1] stock, KEYS[2] buyers, KEYS[3] reservations, KEYS[4] result (this user)
-- ARGV[1] user id, ARGV[2] request id, ARGV[3] now (epoch seconds), ARGV[4] result ttl
-- Returns: >= 0 units left after this one; -1 already bought; -2 sold out; -3 sale not loaded.
local stock = redis.call('GET', KEYS[1])
if not stock then
  return -3
end
if redis.call('SISMEMBER', KEYS[2], ARGV[1]) == 1 then
  return -1
end
stock = tonumber(stock)
if stock <= 0 then
  return -2
end
redis.call('DECR', KEYS[1])
redis.call('SADD', KEYS[2], ARGV[1])
redis.call('HSET', KEYS[3], ARGV[2], ARGV[1] .. ':' .. ARGV[3])
redis.call('SET', KEYS[4], '0', 'EX', ARGV[4])
return stock - 1
