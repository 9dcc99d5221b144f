-- Transition: a cancelled order's unit -> back in the stock, exactly once. Called after the
-- cancellation committed, with the ticket (the sale's load generation) read while the
-- cancellation held the sale's stock lock (pg_advisory_xact_lock, goods.services).
-- KEYS[1] stock, KEYS[2] buyers, KEYS[3] result (this user), KEYS[4] generation,
-- KEYS[5] this order's returned-mark, KEYS[6] reservations, KEYS[7] claims.
-- ARGV[1] user id, ARGV[2] ticket, ARGV[3] order id, ARGV[4] mark ttl, ARGV[5] the order's
-- request id (its reservation).
-- Returns 1 returned; 0 this order's unit came back already; -1 the sale was loaded from the
-- database since the ticket (that load read the committed cancellation, so it counted the unit
-- and dropped the shopper from the buyer set: doing either again would sell the unit twice);
-- -2 the sale is not loaded (the next load counts the unit).
-- Whatever it returns, an answer that still names the cancelled order goes, and so does the
-- order's reservation if a writer crashed before settling it: that writer's late settle then
-- finds nothing, and cannot point the shopper's answer back at this order. Returned, an answer
-- "queued" goes too: it was that reservation's (the shopper, a buyer until now, could hold no
-- other), and the shopper asking next is told from the database.
if redis.call('GET', KEYS[3]) == ARGV[3] then
  redis.call('DEL', KEYS[3])
end
redis.call('HDEL', KEYS[6], ARGV[5])
redis.call('HDEL', KEYS[7], ARGV[5])
if not redis.call('SET', KEYS[5], '1', 'NX', 'EX', ARGV[4]) then
  return 0
end
if (redis.call('GET', KEYS[4]) or '') ~= ARGV[2] then
  return -1
end
if redis.call('EXISTS', KEYS[1]) == 0 then
  return -2
end
redis.call('INCR', KEYS[1])
redis.call('SREM', KEYS[2], ARGV[1])
if redis.call('GET', KEYS[3]) == '0' then
  redis.call('DEL', KEYS[3])
end
return 1
