-- A merchant removes units: only units nobody holds can go. Runs before the database's own
-- conditional UPDATE, inside the transaction that holds the sale's stock lock.
-- KEYS[1] stock, KEYS[2] generation. ARGV[1] units to remove.
-- Returns {1, ticket} taken; {0, ticket} fewer units are free than that; {-1, ticket} the sale
-- is not loaded (the database alone decides; the next load counts it).
local generation = redis.call('GET', KEYS[2]) or ''
local stock = redis.call('GET', KEYS[1])
if not stock then
  return {-1, generation}
end
if tonumber(stock) < tonumber(ARGV[1]) then
  return {0, generation}
end
redis.call('DECRBY', KEYS[1], ARGV[1])
return {1, generation}
