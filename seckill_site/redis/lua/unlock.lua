-- Release a lock only if this caller still owns it (its token is the value).
-- KEYS[1] lock; ARGV[1] owner token. Returns 1 when released, 0 when it was not ours.
if redis.call('GET', KEYS[1]) == ARGV[1] then
  return redis.call('DEL', KEYS[1])
end
return 0
