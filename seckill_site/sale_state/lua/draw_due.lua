-- Is a draw sale's draw due? By the clock of the node that holds the sale (TIME), the one
-- enter.lua reads: once this answers 1, no entry is taken any more, so the entrants the drawer
-- reads next are all of them (on a cluster another node's clock may differ).
-- KEYS[1] window. Returns 1 due, 0 not yet, -1 not a draw sale (or not loaded).
local draw = tonumber(redis.call('HGET', KEYS[1], 'draw') or '0') or 0
if draw <= 0 then
  return -1
end
local time = redis.call('TIME')
if tonumber(time[1]) + tonumber(time[2]) / 1000000 >= draw then
  return 1
end
return 0
