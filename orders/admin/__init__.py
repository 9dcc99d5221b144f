"""The merchant's admin of orders: the orders themselves (order.py) and their money
(payments.py). Importing the package registers both."""

from orders.admin.order import OrderAdmin
from orders.admin.payments import PaymentAdmin, PaymentMismatchAdmin

__all__ = ["OrderAdmin", "PaymentAdmin", "PaymentMismatchAdmin"]
