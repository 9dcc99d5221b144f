-- A cancelled order's unit comes back: stock up by one, the buyer may try again.
-- KEYS[1] stock, KEYS[2] buyers, KEYS[3] result (this user); ARGV[1] user id
-- If the stock key is missing (Redis lost it) nothing is incremented: the next warm
-- rebuilds it from the database, which already holds the returned unit.
if redis.call('EXISTS', KEYS[1]) == 1 then
  redis.call('INCR', KEYS[1])
end
redis.call('SREM', KEYS[2], ARGV[1])
redis.call('DEL', KEYS[3])
return 1
