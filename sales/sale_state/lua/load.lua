-- Transition of the whole sale: load it from the database ('apply'), or only compare ('check').
-- The caller holds the sale's stock lock from its database read until this call returns.
-- KEYS[1] stock, KEYS[2] buyers, KEYS[3] reservations, KEYS[4] window, KEYS[5] generation
-- ARGV[1] database stock, ARGV[2] start epoch, ARGV[3] end epoch, ARGV[4] 'apply' or 'check',
-- ARGV[5] the new generation (apply), ARGV[6] n = how many request ids follow that already
-- have their order in the database, ARGV[7 .. 6+n] those request ids, ARGV[7+n ..] user ids
-- holding a live order. The draw's epoch second (0: none) is the window's 'draw' field, set by
-- the caller with window_set after the load (sale_state.load).
-- A load writes a new generation: a ticket read before it (unit_return.lua, stock_add.lua)
-- no longer applies, because this load already counted what that ticket would add.
--
-- The database stock and the written request ids come from one database snapshot, so a
-- reservation is counted exactly once: either its order is in the snapshot (and in the
-- database stock), or it is in flight and Redis keeps its unit out of the stock.
-- Returns {stock before or -1, expected stock, buyers before, expected buyers, 1 if the buyer sets differ}.
local written = {}
local n = tonumber(ARGV[6])
for i = 7, 6 + n do
  written[ARGV[i]] = true
end
local expected_buyers = {}
local expected_count = 0
local function expect(user)
  if not expected_buyers[user] then
    expected_buyers[user] = true
    expected_count = expected_count + 1
  end
end
for i = 7 + n, #ARGV do
  expect(ARGV[i])
end
local reservations = redis.call('HGETALL', KEYS[3])
local in_flight = 0
for i = 1, #reservations, 2 do
  -- A reservation whose order is written is counted by the database (its live order names the
  -- buyer, or its cancellation returned the unit): only the others hold a unit and a buyer here.
  if not written[reservations[i]] then
    in_flight = in_flight + 1
    expect(string.match(reservations[i + 1], '^([^:]+)'))
  end
end
local stock = tonumber(ARGV[1]) - in_flight
if stock < 0 then
  stock = 0
end
local previous = redis.call('GET', KEYS[1])
local buyers_before = redis.call('SCARD', KEYS[2])
local differ = 0
if buyers_before ~= expected_count then
  differ = 1
else
  for user, _ in pairs(expected_buyers) do
    if redis.call('SISMEMBER', KEYS[2], user) == 0 then
      differ = 1
      break
    end
  end
end
if ARGV[4] == 'apply' then
  redis.call('SET', KEYS[1], stock)
  redis.call('DEL', KEYS[2])
  local batch = {}
  for user, _ in pairs(expected_buyers) do
    batch[#batch + 1] = user
    if #batch == 5000 then
      redis.call('SADD', KEYS[2], unpack(batch))
      batch = {}
    end
  end
  if #batch > 0 then
    redis.call('SADD', KEYS[2], unpack(batch))
  end
  redis.call('HSET', KEYS[4], 'start', ARGV[2], 'end', ARGV[3])
  redis.call('SET', KEYS[5], ARGV[5])
end
return {previous and tonumber(previous) or -1, stock, buyers_before, expected_count, differ}
