-- Units added to a sale in the database (a merchant's edit, or a removal undone) reach Redis:
-- after the commit, and only if the sale was not loaded from the database since the ticket
-- was read under the sale's stock lock (that load counted them already).
-- KEYS[1] stock, KEYS[2] generation. ARGV[1] units, ARGV[2] ticket.
-- Returns 1 added; -1 loaded since (nothing to do); -2 not loaded.
if (redis.call('GET', KEYS[2]) or '') ~= ARGV[2] then
  return -1
end
if redis.call('EXISTS', KEYS[1]) == 0 then
  return -2
end
redis.call('INCRBY', KEYS[1], ARGV[1])
return 1
