-- Admit from the head of a sale's line as far as the room's pace allows by now: a token bucket
-- filled at the effective rate (tokens a crowd did not use kept up to `burst`), and at most
-- `active max` passes running at once. Nothing while halted (stop, queue everyone) or before
-- the start. Counted lazily, by whoever reads the room, from the time elapsed since the last count.
-- KEYS: head, tail, bucket, active, admitted log, abandoned, queue.
-- ARGV: now, starts at, rate (admissions per second, 0: no pace), burst (tokens), active max
-- (0: no cap), halted (1/0), pass seconds.
-- Answers {head, tail, admitted now}.
local now, starts = tonumber(ARGV[1]), tonumber(ARGV[2])
local rate, burst = tonumber(ARGV[3]), tonumber(ARGV[4])
local active_max, halted, pass_seconds = tonumber(ARGV[5]), ARGV[6] == '1', tonumber(ARGV[7])
local head = tonumber(redis.call('GET', KEYS[1]) or '0')
local tail = tonumber(redis.call('GET', KEYS[2]) or '0')

-- Passes that have ended free their places; an admitted shopper who never took theirs left.
local ended = redis.call('ZRANGEBYSCORE', KEYS[4], '-inf', now)
if #ended > 0 then
  for _, user in ipairs(ended) do
    if not redis.call('ZSCORE', KEYS[5], user) then
      redis.call('INCR', KEYS[6])
    end
  end
  redis.call('ZREMRANGEBYSCORE', KEYS[4], '-inf', now)
end

local at = tonumber(redis.call('HGET', KEYS[3], 'at') or '-1')
local tokens = tonumber(redis.call('HGET', KEYS[3], 'tokens') or '1')
if at < 0 then
  at = now
end
-- Nothing fills before the start.
at = math.max(at, starts)
local elapsed = math.max(0, now - at)
at = math.max(at, now)
if halted or now < starts then
  -- No filling while nobody may be admitted: the pace resumes where it stopped.
  redis.call('HSET', KEYS[3], 'at', at, 'tokens', tokens)
  return {head, tail, 0}
end

local waiting = tail - head
local admit = waiting
if rate > 0 then
  local total = tokens + elapsed * rate
  admit = math.min(waiting, math.floor(total))
  tokens = total - admit
end
if active_max > 0 then
  local free = math.max(0, active_max - redis.call('ZCARD', KEYS[4]))
  if free < admit then
    if rate > 0 then
      tokens = tokens + (admit - free)
    end
    admit = free
  end
end
if rate > 0 then
  tokens = math.min(tokens, burst)
end
redis.call('HSET', KEYS[3], 'at', at, 'tokens', tokens)

if admit > 0 then
  local users = redis.call('ZRANGEBYSCORE', KEYS[7], head + 1, head + admit)
  for _, user in ipairs(users) do
    -- Counted active until their pass would end, taken or not (wr_issue sets its own end).
    redis.call('ZADD', KEYS[4], 'NX', now + pass_seconds, user)
  end
  head = head + admit
  redis.call('SET', KEYS[1], head)
end
return {head, tail, admit}
