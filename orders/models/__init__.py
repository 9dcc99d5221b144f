"""The order and its sale side (order.py); the money taken for it (payment.py)."""

from orders.models.order import ORDER_ADDRESS_FIELDS, Order, OrderAddress, OrderStatus, SeckillOrder
from orders.models.payment import (
    Payment,
    PaymentMismatch,
    PaymentNotice,
    PaymentStatus,
    Provider,
    Refund,
    RefundKind,
    RefundStatus,
)

__all__ = [
    "ORDER_ADDRESS_FIELDS",
    "Order",
    "OrderAddress",
    "OrderStatus",
    "Payment",
    "PaymentMismatch",
    "PaymentNotice",
    "PaymentStatus",
    "Provider",
    "Refund",
    "RefundKind",
    "RefundStatus",
    "SeckillOrder",
]
