# The seckill app owns no tables: its state lives in Redis (seckill.keys, sales.sale_state) and its orders in orders.
