-- Is a draw sale's draw due? By the clock of the node that holds this window (TIME), the one
-- enter.lua reads on it. Once due, the window is marked closed: from then on enter.lua takes no
-- entry there whatever the clock says, so the entrants the drawer reads next are all of them.
-- A sale with entry shards runs this on each shard's copy (sale_state.draw_due); on a cluster
-- their nodes' clocks may differ, and the draw waits for the last.
-- KEYS[1] window (or a shard's copy). Returns 1 due, 0 not yet, -1 not a draw sale (or not loaded).
local draw = tonumber(redis.call('HGET', KEYS[1], 'draw') or '0') or 0
if draw <= 0 then
  return -1
end
local time = redis.call('TIME')
if tonumber(time[1]) + tonumber(time[2]) / 1000000 >= draw then
  redis.call('HSET', KEYS[1], 'closed', '1')
  return 1
end
return 0
