-- The opening's shuffle: the pre-queue's members get places 1..P in the order given (the
-- caller ranked them by the published seed), before anyone joins first come, first served.
-- KEYS: queue, pre-queue, tail, seed.  ARGV: the revealed seed, then the user ids in order.
-- Answers P, -1 when the shuffle was made already, -2 when the pre-queue is not the list
-- given (someone joined it meanwhile: the caller ranks it again).
if redis.call('HEXISTS', KEYS[4], 'shuffled') == 1 then
  return -1
end
local count = #ARGV - 1
if redis.call('SCARD', KEYS[2]) ~= count then
  return -2
end
for i = 2, #ARGV do
  if redis.call('SISMEMBER', KEYS[2], ARGV[i]) == 0 then
    return -2
  end
  redis.call('ZADD', KEYS[1], i - 1, ARGV[i])
end
-- Nobody joined first come, first served before the shuffle (wr_join waits for it).
redis.call('SET', KEYS[3], count)
redis.call('HSET', KEYS[4], 'seed', ARGV[1], 'shuffled', count)
return count
