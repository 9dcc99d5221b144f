"""The merchant's admin of orders: the orders themselves (order.py), their money
(orders/payments/admin.py) and their parcels (fulfilment.py). Importing the package registers
them all."""

from orders.admin.order import OrderAdmin
from orders.payments.admin import PaymentAdmin, PaymentMismatchAdmin

__all__ = ["OrderAdmin", "PaymentAdmin", "PaymentMismatchAdmin"]
