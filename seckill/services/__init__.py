"""The seckill app's writes, a module per step of a purchase: `paths` (captcha and one-time
path), `gate`, `writer` (orders), `draw` and `reconcile`. They change a sale's Redis state only
through sales.sale_state's transitions.
"""
