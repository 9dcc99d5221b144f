-- Load a sale from the database into Redis, keeping units that are in flight.
-- KEYS[1] stock, KEYS[2] buyers, KEYS[3] reservations, KEYS[4] window
-- ARGV[1] database stock, ARGV[2] start epoch, ARGV[3] end epoch, ARGV[4..] user ids with a live order
-- Reservations are units Redis handed out whose orders are not in the database yet, so the
-- Redis stock is the database stock minus them, and their users stay in the buyer set.
-- Returns {previous stock or -1 if missing, new stock, buyers}.
local previous = redis.call('GET', KEYS[1])
local in_flight = redis.call('HVALS', KEYS[3])
local stock = tonumber(ARGV[1]) - #in_flight
if stock < 0 then
  stock = 0
end
redis.call('SET', KEYS[1], stock)
redis.call('DEL', KEYS[2])
local batch = {}
for i = 4, #ARGV do
  batch[#batch + 1] = ARGV[i]
  if #batch == 5000 then
    redis.call('SADD', KEYS[2], unpack(batch))
    batch = {}
  end
end
for _, value in ipairs(in_flight) do
  batch[#batch + 1] = string.match(value, '^([^:]+)')
  if #batch == 5000 then
    redis.call('SADD', KEYS[2], unpack(batch))
    batch = {}
  end
end
if #batch > 0 then
  redis.call('SADD', KEYS[2], unpack(batch))
end
redis.call('HSET', KEYS[4], 'start', ARGV[2], 'end', ARGV[3])
return {previous and tonumber(previous) or -1, stock, redis.call('SCARD', KEYS[2])}
