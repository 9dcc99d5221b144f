-- Compare-and-delete the one-time path: a reused, expired or guessed path is refused.
-- KEYS[1] path key (this user and sale); ARGV[1] the path the client sent. Returns 1 or 0.
if redis.call('GET', KEYS[1]) == ARGV[1] then
  redis.call('DEL', KEYS[1])
  return 1
end
return 0
