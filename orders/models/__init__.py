"""The order and its sale side (order.py); the money taken for it (payment.py); its parcel,
refund requests and audit trail (fulfilment.py)."""

from orders.models.fulfilment import (
    Carrier,
    OrderEvent,
    OrderEventKind,
    RefundRequest,
    RefundRequestStatus,
    Shipment,
)
from orders.models.order import ORDER_ADDRESS_FIELDS, PAID_STATUSES, Order, OrderAddress, OrderStatus, SeckillOrder
from orders.models.payment import (
    Payment,
    PaymentMismatch,
    PaymentNotice,
    PaymentStatus,
    Refund,
    RefundKind,
    RefundStatus,
)

__all__ = [
    "ORDER_ADDRESS_FIELDS",
    "PAID_STATUSES",
    "Carrier",
    "OrderEvent",
    "OrderEventKind",
    "RefundRequest",
    "RefundRequestStatus",
    "Shipment",
    "Order",
    "OrderAddress",
    "OrderStatus",
    "Payment",
    "PaymentMismatch",
    "PaymentNotice",
    "PaymentStatus",
    "Refund",
    "RefundKind",
    "RefundStatus",
    "SeckillOrder",
]
