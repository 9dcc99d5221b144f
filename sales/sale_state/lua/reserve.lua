-- Transition: (none) -> reserved. The gate's one Redis round trip: hand out one unit of a
-- sale to one user, atomically (sales/sale_state/__init__.py has the whole table).
-- KEYS[1] stock, KEYS[2] buyers, KEYS[3] reservations, KEYS[4] result (this user),
-- KEYS[5] one-time path (this user), KEYS[6] window, KEYS[7] flush mark (batch writer),
-- KEYS[8] this user's buy counter for the rate limit, KEYS[9] the drawn mark (draw_apply.lua)
-- ARGV[1] user id, ARGV[2] request id, ARGV[3] result ttl, ARGV[4] the path the client sent,
-- ARGV[5] flush mark lifetime in ms, ARGV[6] the
-- buying HTTP request's id ('' when none), kept with the reservation for the writer's log line,
-- ARGV[7] the rate limit's count and ARGV[8] its window in seconds (a fixed window from the first buy)
-- Returns {left, flush}: left >= 0 units left after this one, or a refusal (sale_state.Refusal):
-- -1 already bought; -2 sold out; -3 sale not loaded; -4 path invalid (reused, expired or
-- guessed); -5 not started; -6 ended; {-7, seconds}: over the rate limit, retry after that long;
-- for a draw sale (the window's 'draw' field, docs/draw.md): {-8, draw} in its entry window (the
-- caller enters the shopper instead, enter.lua), {-9, draw} after it until the draw is made.
-- flush is 1 when the caller must publish the sale's flush message: the writer's mark was not
-- set, so no flush is queued or running to pick this reservation up. The mark's value is this
-- request's id, so that a give-back (give_back.lua) deletes only a mark this request set.
-- Public facts (not started, ended, sold out) are answered before the path is taken, as
-- the gate's per-process marks do: they leave the path for a later try. A valid path is
-- consumed by the attempt that follows it, whatever its outcome: one path, one try.
-- The window is judged by this shard's clock (TIME), never by the calling web node's: a node
-- whose clock runs ahead cannot open a sale early.
local stock = redis.call('GET', KEYS[1])
local window = redis.call('HMGET', KEYS[6], 'start', 'end', 'draw')
if not stock or not window[1] or not window[2] then
  -- Paths are only issued for sales that exist: with a valid one, Redis lost the sale (the
  -- caller has it rebuilt); without, the sale id is made up.
  if redis.call('GET', KEYS[5]) ~= ARGV[4] then
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
if draw > 0 then
  if now < draw then
    return {-8, draw}
  end
  if redis.call('EXISTS', KEYS[9]) == 0 then
    return {-9, draw}
  end
end
stock = tonumber(stock)
if stock <= 0 then
  return {-2, 0}
end
-- The rate limit counts only requests that could still buy, here, in the same call: the
-- public answers above cost a shopper nothing, and the gate pays no round trip of its own
-- for the limit. An over-limit request leaves the path alone.
local tries = redis.call('INCR', KEYS[8])
if tries == 1 then
  redis.call('EXPIRE', KEYS[8], ARGV[8])
end
if tries > tonumber(ARGV[7]) then
  local wait = redis.call('TTL', KEYS[8])
  if wait < 0 then
    redis.call('EXPIRE', KEYS[8], ARGV[8])  -- a counter that lost its TTL must not block for ever
    wait = tonumber(ARGV[8])
  end
  return {-7, wait}
end
if redis.call('GET', KEYS[5]) ~= ARGV[4] then
  return {-4, 0}
end
redis.call('DEL', KEYS[5])
if redis.call('SISMEMBER', KEYS[2], ARGV[1]) == 1 then
  return {-1, 0}
end
redis.call('DECR', KEYS[1])
redis.call('SADD', KEYS[2], ARGV[1])
local reservation = ARGV[1] .. ':' .. math.floor(now)
if ARGV[6] ~= '' then
  reservation = reservation .. ':' .. ARGV[6]
end
redis.call('HSET', KEYS[3], ARGV[2], reservation)
redis.call('SET', KEYS[4], '0', 'EX', ARGV[3])
local flush = 0
if redis.call('SET', KEYS[7], ARGV[2], 'NX', 'PX', ARGV[5]) then
  flush = 1
end
return {stock - 1, flush}
