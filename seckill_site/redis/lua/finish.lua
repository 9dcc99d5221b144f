-- An order was written (or already existed) for a reservation: record the answer, drop the reservation.
-- KEYS[1] reservations, KEYS[2] result (this user)
-- ARGV[1] request id, ARGV[2] order id, ARGV[3] result ttl
redis.call('HDEL', KEYS[1], ARGV[1])
redis.call('SET', KEYS[2], ARGV[2], 'EX', ARGV[3])
return 1
