"""The seckill app's writes, one module per part of a purchase's way:

- `paths`: the captcha and the one-time path that earn a shopper one try at the gate;
- `gate`: the gate itself (`seckill_attempt`), the hottest code in the shop;
- `writer`: the order writer that turns the sale's reservations into orders;
- `reconcile`: loading a sale into Redis from the database, and squaring the two.

A sale's Redis state belongs to goods.sale_state; these call its transitions.
"""
