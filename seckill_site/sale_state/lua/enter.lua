-- Transition: (none) -> entered. The gate's one Redis call in a draw sale's entry window
-- (docs/draw.md): one entry per shopper per sale, no stock taken.
-- KEYS[1] stock, KEYS[2] window, KEYS[3] entrants, KEYS[4] buyers, KEYS[5] result (this user),
-- KEYS[6] one-time path (this user), KEYS[7] this user's buy counter for the rate limit,
-- KEYS[8] entries per second (hash: epoch second -> entries), for the merchant's live view
-- ARGV[1] user id, ARGV[2] result ttl, ARGV[3] the path the client sent, ARGV[4] the rate
-- limit's count and ARGV[5] its window in seconds (shared with reserve.lua)
-- Returns {answer, extra}: 1 entered now, 0 entered before (both: extra = the draw's epoch
-- second), or a refusal as reserve.lua's (sale_state.Refusal): -1 already bought, -3 not loaded,
-- -4 path invalid, -5 not started, -6 ended, {-7, seconds} rate limited, -8 not in an entry
-- window (a first come, first served sale, or the window is over: the caller reserves).
-- The window is judged by Redis's TIME, as reserve.lua does: once the draw's second has come
-- by this clock no entry is taken, so the drawer reads a set that no longer changes.
local window = redis.call('HMGET', KEYS[2], 'start', 'end', 'draw')
if redis.call('EXISTS', KEYS[1]) == 0 or not window[1] or not window[2] then
  if redis.call('GET', KEYS[6]) ~= ARGV[3] then
    return {-4, 0}
  end
  return {-3, 0}
end
local time = redis.call('TIME')
local now = tonumber(time[1]) + tonumber(time[2]) / 1000000
if now < tonumber(window[1]) then
  return {-5, 0}
end
if now >= tonumber(window[2]) then
  return {-6, 0}
end
local draw = tonumber(window[3] or '0') or 0
if draw <= 0 or now >= draw then
  return {-8, 0}
end
-- Entered already: the same answer again, at no cost (no counter, the path left alone).
if redis.call('SISMEMBER', KEYS[3], ARGV[1]) == 1 then
  return {0, draw}
end
local tries = redis.call('INCR', KEYS[7])
if tries == 1 then
  redis.call('EXPIRE', KEYS[7], ARGV[5])
end
if tries > tonumber(ARGV[4]) then
  local wait = redis.call('TTL', KEYS[7])
  if wait < 0 then
    redis.call('EXPIRE', KEYS[7], ARGV[5])
    wait = tonumber(ARGV[5])
  end
  return {-7, wait}
end
if redis.call('GET', KEYS[6]) ~= ARGV[3] then
  return {-4, 0}
end
redis.call('DEL', KEYS[6])
if redis.call('SISMEMBER', KEYS[4], ARGV[1]) == 1 then
  return {-1, 0}
end
-- The entry and its answer first, the live view's count last: a script that fails midway (Redis
-- does not roll back) never leaves an entrant without their answer.
redis.call('SET', KEYS[5], '-2', 'EX', ARGV[2])
redis.call('SADD', KEYS[3], ARGV[1])
redis.call('HINCRBY', KEYS[8], math.floor(now), 1)
return {1, draw}
