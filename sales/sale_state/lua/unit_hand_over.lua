-- Transition: a cancelled order's unit -> the order that offers it to the next entrant of the
-- draw's ranking, exactly once, never through the stock. Called after the cancellation and the
-- offer's order committed together, with the ticket read while they held the sale's stock lock.
-- KEYS[1] stock, KEYS[2] buyers, KEYS[3] result (the cancelled order's shopper),
-- KEYS[4] generation, KEYS[5] the cancelled order's returned-mark, KEYS[6] reservations,
-- KEYS[7] claims, KEYS[8] result (the offered entrant), KEYS[9] the offer's order's
-- returned-mark.
-- ARGV[1] cancelled order's user id, ARGV[2] ticket, ARGV[3] cancelled order id, ARGV[4] mark
-- ttl, ARGV[5] the cancelled order's request id, ARGV[6] offered user id, ARGV[7] the offer's
-- order id, ARGV[8] result ttl.
-- Returns as unit_return.lua does: 1 handed over; 0 came back already; -1 the sale was loaded
-- since the ticket (the load read both orders: the buyer set is right, and only the entrant's
-- answer is set); -2 not loaded.
-- The stock never moves: the database's went up with the cancellation and down with the offer
-- in one transaction, so no buy can take the unit between them. The cancelled order's traces go
-- as in unit_return.lua; the entrant becomes a buyer whose answer is their order, unless that
-- order's own unit came back already (its cancellation's step arrived first): then it is not.
if redis.call('GET', KEYS[3]) == ARGV[3] then
  redis.call('DEL', KEYS[3])
end
redis.call('HDEL', KEYS[6], ARGV[5])
redis.call('HDEL', KEYS[7], ARGV[5])
if not redis.call('SET', KEYS[5], '1', 'NX', 'EX', ARGV[4]) then
  return 0
end
local offer_live = redis.call('EXISTS', KEYS[9]) == 0
if (redis.call('GET', KEYS[4]) or '') ~= ARGV[2] then
  -- The load read both orders and set the buyers; the entrant's answer is still theirs to get.
  if offer_live then
    redis.call('SET', KEYS[8], ARGV[7], 'EX', ARGV[8])
  end
  return -1
end
if redis.call('EXISTS', KEYS[1]) == 0 then
  return -2
end
redis.call('SREM', KEYS[2], ARGV[1])
if redis.call('GET', KEYS[3]) == '0' then
  redis.call('DEL', KEYS[3])
end
if offer_live then
  redis.call('SADD', KEYS[2], ARGV[6])
  redis.call('SET', KEYS[8], ARGV[7], 'EX', ARGV[8])
end
return 1
