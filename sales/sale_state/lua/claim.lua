-- Transition: reserved -> claimed by one writer. Takes up to ARGV[2] reservations that no
-- writer holds, or whose writer's lease ran out, or that this same token already holds (a
-- redelivered or retried flush message keeps its task id, and so its token).
-- KEYS[1] reservations, KEYS[2] claims, KEYS[3] flush mark
-- ARGV[1] token, ARGV[2] most reservations to claim, ARGV[3] lease in ms, ARGV[4] flush mark
-- lifetime in ms, ARGV[5] only reservations made before this epoch second ('0': any; the
-- reconciler takes only stale ones).
-- Returns {left, {request id 1, reservation 1, request id 2, reservation 2, ...}}: left is how
-- many reservations the sale holds in all (claimed or not). With none left the flush mark goes
-- in the same step, so a buy that comes after this publishes a new flush. With some claimed
-- here the mark is renewed under this token (a give-back leaves such a mark alone).
-- HSCAN walks the hash a page at a time inside this one call: a page is a few hundred fields,
-- and the walk stops as soon as the batch is full.
local time = redis.call('TIME')
local now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
local wanted = tonumber(ARGV[2])
local before = tonumber(ARGV[5])
local lease_until = now + tonumber(ARGV[3])
local taken, seen, count = {}, {}, 0
local cursor = '0'
repeat
  local page = redis.call('HSCAN', KEYS[1], cursor, 'COUNT', 200)
  cursor = page[1]
  local fields = page[2]
  for i = 1, #fields, 2 do
    local request_id = fields[i]
    if count < wanted and not seen[request_id] then
      seen[request_id] = true
      local claim = redis.call('HGET', KEYS[2], request_id)
      local free = before == 0 or tonumber(string.match(fields[i + 1], '^[^:]+:([^:]+)')) < before
      if free and claim then
        local owner, lease = string.match(claim, '^(.*):(%d+)$')
        free = owner == ARGV[1] or tonumber(lease) <= now
      end
      if free then
        redis.call('HSET', KEYS[2], request_id, ARGV[1] .. ':' .. lease_until)
        taken[#taken + 1] = request_id
        taken[#taken + 1] = fields[i + 1]
        count = count + 1
      end
    end
  end
until cursor == '0' or count >= wanted
local left = redis.call('HLEN', KEYS[1])
if left == 0 then
  redis.call('DEL', KEYS[3])
elseif count > 0 then
  redis.call('SET', KEYS[3], ARGV[1], 'PX', ARGV[4])
end
return {left, taken}
