"""The orders app's metrics; the money's are orders/payments/metrics.py."""

from prometheus_client import Counter

ORDERS_EXPIRED = Counter("seckill_orders_expired_total", "Unpaid orders cancelled by the expiry sweep")
