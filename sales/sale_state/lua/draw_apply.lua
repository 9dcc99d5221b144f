-- Transition: entered -> reserved, for the draw's winners (one chunk of them per call, so a
-- draw of many units never holds the shard for long); the last chunk marks the sale drawn.
-- A winner becomes a reservation exactly as reserve.lua makes one: a unit taken, the shopper a
-- buyer, the reservation in the outbox, the answer "queued", the writer's flush mark set.
-- KEYS[1] stock, KEYS[2] buyers, KEYS[3] reservations, KEYS[4] flush mark, KEYS[5] drawn mark,
-- KEYS[6] the winners turned so far (a set), KEYS[7 ..] the result key of each winner, in ARGV's
-- order.
-- ARGV[1] result ttl, ARGV[2] flush mark lifetime in ms, ARGV[3] '1' on the last chunk,
-- ARGV[4] the flush mark's value, then per winner: user id, request id.
-- A winner is turned at most once (the set of those turned): a chunk applied before (a drawer
-- that crashed and is redone, or two drawers of the same stored draw) changes nothing, even for
-- a winner whose order has been written and cancelled since; nor does a winner who holds a unit
-- or another answer already, or any when no unit is left. An entrant's answer is "entered"
-- ('-2') with one entry shard, none with several (membership of the shard is the answer). The
-- others keep theirs, which reads as "not drawn" once the drawn mark stands (sale_state.result):
-- no write per loser.
-- Returns {applied, flush, drawn before}: flush is 1 when the caller must publish the flush.
if redis.call('EXISTS', KEYS[5]) == 1 then
  return {0, 0, 1}
end
local time = redis.call('TIME')
local now = tonumber(time[1])
local applied = 0
for i = 7, #KEYS do
  local at = 5 + (i - 7) * 2
  local user, request_id = ARGV[at], ARGV[at + 1]
  local stock = tonumber(redis.call('GET', KEYS[1]) or '0')
  local answer = redis.call('GET', KEYS[i])
  if stock > 0 and (not answer or answer == '-2') and redis.call('SISMEMBER', KEYS[2], user) == 0
      and redis.call('SADD', KEYS[6], user) == 1 then
    redis.call('DECR', KEYS[1])
    redis.call('SADD', KEYS[2], user)
    redis.call('HSET', KEYS[3], request_id, user .. ':' .. now .. ':draw')
    redis.call('SET', KEYS[i], '0', 'EX', ARGV[1])
    applied = applied + 1
  end
end
local flush = 0
if applied > 0 and redis.call('SET', KEYS[4], ARGV[4], 'NX', 'PX', ARGV[2]) then
  flush = 1
end
if ARGV[3] == '1' then
  redis.call('SET', KEYS[5], '1')
end
return {applied, flush, 0}
