-- Check a text-message code: single use, at most ARGV[2] checks.
-- KEYS[1] the code's hash {code, checks, requester}. ARGV: the code tried, the most checks allowed.
-- Returns {1, requester} right (the code is gone; the requester who asked for it has shown
-- they receive the number's messages), {0} wrong, {-1} no code (never sent, expired, used up).
local code = redis.call('HGET', KEYS[1], 'code')
if not code then
  return {-1}
end
if code == ARGV[1] then
  local requester = redis.call('HGET', KEYS[1], 'requester') or ''
  redis.call('DEL', KEYS[1])
  return {1, requester}
end
if redis.call('HINCRBY', KEYS[1], 'checks', 1) >= tonumber(ARGV[2]) then
  redis.call('DEL', KEYS[1])
end
return {0}
