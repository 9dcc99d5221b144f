-- Transition: (none) -> entered. The gate's one Redis call in a draw sale's entry window
-- (docs/draw.md): one entry per shopper per sale, no stock taken. It runs on the shopper's
-- entry shard (keys.entry_shard): with one shard that is the sale's own slot, and the call also
-- checks "already bought" and sets the shopper's answer there; with K shards it touches only
-- shard k's keys, so the sale's slot takes no call per entry (the drawer leaves buyers out).
-- KEYS[1] the window (shard k's copy), KEYS[2] shard k's entrants, KEYS[3] the shopper's
-- one-time path, KEYS[4] their entry counter for the rate limit, KEYS[5] shard k's entries per
-- second (hash: epoch second -> entries), for the merchant's live view; with one shard also
-- KEYS[6] stock, KEYS[7] buyers, KEYS[8] result (this user).
-- ARGV[1] user id, ARGV[2] result ttl, ARGV[3] the path the client sent, ARGV[4] the rate
-- limit's count and ARGV[5] its window in seconds (shared with reserve.lua)
-- Returns {answer, extra}: 1 entered now, 0 entered before (both: extra = the draw's epoch
-- second), or a refusal as reserve.lua's (sale_state.Refusal): -1 already bought, -3 not loaded,
-- -4 path invalid, -5 not started, -6 ended, {-7, seconds} rate limited, -8 not in an entry
-- window (a first come, first served sale, or the window is over: the caller reserves), or
-- {-11, K} called for one shard where the sale has K (the caller's copy of the window was
-- older than the sale's switch to a draw: it calls again on the shopper's shard).
-- Entries are taken from the window's 'entries' second (a draw that takes them ahead of the
-- start) or from its start, until the draw's second.
-- The window is judged by Redis's TIME, as reserve.lua does, and by the shard's closed mark
-- (draw_due.lua sets it when it finds the draw due): once the drawer saw the draw due on a
-- shard, no entry is taken there, so the drawer reads a set that no longer changes.
local one_shard = #KEYS >= 8
local window = redis.call('HMGET', KEYS[1], 'start', 'end', 'draw', 'closed', 'shards', 'entries')
if (one_shard and redis.call('EXISTS', KEYS[6]) == 0) or not window[1] or not window[2] then
  if redis.call('GET', KEYS[3]) ~= ARGV[3] then
    return {-4, 0}
  end
  return {-3, 0}
end
if one_shard and tonumber(window[5] or '1') > 1 then
  return {-11, tonumber(window[5])}
end
local time = redis.call('TIME')
local now = tonumber(time[1]) + tonumber(time[2]) / 1000000
-- Entries open at the start, or earlier when the merchant opened them ahead (window 'entries').
local opens = tonumber(window[6] or '0') or 0
if opens <= 0 then
  opens = tonumber(window[1])
end
if now < opens then
  return {-5, 0}
end
if now >= tonumber(window[2]) then
  return {-6, 0}
end
local draw = tonumber(window[3] or '0') or 0
if draw <= 0 or now >= draw or window[4] then
  return {-8, 0}
end
-- Entered already: the same answer again, at no cost (no counter, the path left alone).
if redis.call('SISMEMBER', KEYS[2], ARGV[1]) == 1 then
  return {0, draw}
end
local tries = redis.call('INCR', KEYS[4])
if tries == 1 then
  redis.call('EXPIRE', KEYS[4], ARGV[5])
end
if tries > tonumber(ARGV[4]) then
  local wait = redis.call('TTL', KEYS[4])
  if wait < 0 then
    redis.call('EXPIRE', KEYS[4], ARGV[5])
    wait = tonumber(ARGV[5])
  end
  return {-7, wait}
end
if redis.call('GET', KEYS[3]) ~= ARGV[3] then
  return {-4, 0}
end
redis.call('DEL', KEYS[3])
if one_shard then
  if redis.call('SISMEMBER', KEYS[7], ARGV[1]) == 1 then
    return {-1, 0}
  end
  -- The entry and its answer first, the live view's count last: a script that fails midway
  -- (Redis does not roll back) never leaves an entrant without their answer.
  redis.call('SET', KEYS[8], '-2', 'EX', ARGV[2])
end
redis.call('SADD', KEYS[2], ARGV[1])
redis.call('HINCRBY', KEYS[5], math.floor(now), 1)
return {1, draw}
