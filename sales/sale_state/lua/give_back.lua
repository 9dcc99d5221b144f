-- Transition: reserved (unclaimed) -> given back. The gate could not publish the flush that
-- writes this reservation: the unit goes back, the shopper leaves the buyer set, the answer
-- "queued" is withdrawn and the shopper is told to try again.
-- KEYS[1] reservations, KEYS[2] claims, KEYS[3] stock, KEYS[4] buyers, KEYS[5] result (this
-- user), KEYS[6] flush mark. ARGV[1] user id, ARGV[2] request id.
-- Returns 1 given back; 2 a writer has claimed it (it will be written or refused by that writer:
-- nothing changes, and the shopper is in fact queued); 0 no such reservation (already settled).
if redis.call('HEXISTS', KEYS[2], ARGV[2]) == 1 then
  return 2
end
if redis.call('HDEL', KEYS[1], ARGV[2]) == 0 then
  return 0
end
if redis.call('EXISTS', KEYS[3]) == 1 then
  redis.call('INCR', KEYS[3])
end
redis.call('SREM', KEYS[4], ARGV[1])
redis.call('DEL', KEYS[5])
-- The mark this request set promised a flush that was never published: drop it so the next
-- buy (or the sweep) publishes one. A mark a running flush has renewed holds that flush's token
-- instead, and stays.
if redis.call('GET', KEYS[6]) == ARGV[2] then
  redis.call('DEL', KEYS[6])
end
return 1
