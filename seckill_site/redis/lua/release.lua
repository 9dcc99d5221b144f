-- A cancelled order's unit comes back: stock up by one, the buyer may try again.
-- KEYS[1] stock, KEYS[2] buyers, KEYS[3] result (this user); ARGV[1] user id
-- Only a shopper still in the buyer set brings a unit back: a reconcile that ran between the
-- cancellation's commit and this script already loaded the returned unit from the database
-- and dropped the shopper from the set, and a second increment would sell a unit twice.
-- If the stock key is missing (Redis lost it) nothing is incremented: the next warm
-- rebuilds it from the database, which already holds the returned unit.
if redis.call('SREM', KEYS[2], ARGV[1]) == 1 and redis.call('EXISTS', KEYS[1]) == 1 then
  redis.call('INCR', KEYS[1])
end
redis.call('DEL', KEYS[3])
return 1
