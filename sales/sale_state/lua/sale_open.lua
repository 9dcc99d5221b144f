-- A new sale's first load: its stock and window, unless a load got there first.
-- KEYS[1] stock, KEYS[2] window, KEYS[3] generation.
-- ARGV[1] stock, ARGV[2] start epoch, ARGV[3] end epoch, ARGV[4] a new generation,
-- ARGV[5] the draw's epoch second (0: first come, first served), ARGV[6] the epoch second a draw
-- sale's entries open ahead of its start (0: at the start; enter.lua).
-- Returns 1 loaded, 0 it was loaded already (then nothing changes).
if redis.call('EXISTS', KEYS[1]) == 1 then
  return 0
end
redis.call('SET', KEYS[1], ARGV[1])
redis.call('HSET', KEYS[2], 'start', ARGV[2], 'end', ARGV[3], 'draw', ARGV[5], 'entries', ARGV[6] or '0')
redis.call('SET', KEYS[3], ARGV[4])
return 1
