# The seckill app owns no tables: its state lives in Redis (seckill_site.redis.keys) and its orders in orders.
