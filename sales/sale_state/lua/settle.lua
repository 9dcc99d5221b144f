-- Transition: claimed by this token -> written or refused. Only reservations this token still
-- holds are settled: one another writer took over (its lease lapsed) or that is already gone
-- is left alone, so a late or repeated writer changes nothing.
-- KEYS[1] reservations, KEYS[2] claims, KEYS[3] stock, KEYS[4] buyers, KEYS[5] flush mark,
-- KEYS[6 ..] the result key of each settled reservation's shopper, in ARGV's order.
-- ARGV[1] token, ARGV[2] result ttl, ARGV[3] flush mark lifetime in ms, then per reservation:
-- request id, user id, kind, order id. Kinds:
--   W written: its order is live; the shopper's answer is the order id.
--   X written, but that order is cancelled already (a writer crashed between its commit and
--     this step, and the shopper cancelled meanwhile): the unit came back with the cancel, so
--     only the reservation goes; the shopper's answer (maybe a newer order's) is left alone.
--   D the shopper holds another live order of the sale (Redis had lost the buyer set): the unit
--     goes back, the shopper stays a buyer, the answer is that order.
--   S the database had no unit (Redis ran ahead of it): the unit is not given back; the
--     shopper leaves the buyer set and is told it failed (-1).
--   R refused for good (a row the database will never take, e.g. the shopper's account was
--     deleted): the unit goes back, the shopper leaves the buyer set, the answer is -1.
-- Returns {settled, left}; the flush mark goes with the last reservation, as in claim.lua.
local ttl = ARGV[2]
local settled = 0
for i = 6, #KEYS do
  local at = 4 + (i - 6) * 4
  local request_id, user, kind, order = ARGV[at], ARGV[at + 1], ARGV[at + 2], ARGV[at + 3]
  local claim = redis.call('HGET', KEYS[2], request_id)
  if claim and string.match(claim, '^(.*):%d+$') == ARGV[1] and redis.call('HDEL', KEYS[1], request_id) == 1 then
    redis.call('HDEL', KEYS[2], request_id)
    settled = settled + 1
    if kind == 'W' then
      redis.call('SET', KEYS[i], order, 'EX', ttl)
    elseif kind == 'D' then
      if redis.call('EXISTS', KEYS[3]) == 1 then
        redis.call('INCR', KEYS[3])
      end
      redis.call('SADD', KEYS[4], user)
      redis.call('SET', KEYS[i], order, 'EX', ttl)
    elseif kind == 'S' or kind == 'R' then
      if kind == 'R' and redis.call('EXISTS', KEYS[3]) == 1 then
        redis.call('INCR', KEYS[3])
      end
      redis.call('SREM', KEYS[4], user)
      redis.call('SET', KEYS[i], '-1', 'EX', ttl)
    end
  end
end
local left = redis.call('HLEN', KEYS[1])
if left == 0 then
  redis.call('DEL', KEYS[5])
else
  redis.call('SET', KEYS[5], ARGV[1], 'PX', ARGV[3])
end
return {settled, left}
