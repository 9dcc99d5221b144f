# The seckill app owns no tables: its state lives in Redis (seckill.keys) and its orders in orders.
