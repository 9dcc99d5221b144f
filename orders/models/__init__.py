"""The app's models, where Django looks for them: the order and its sale side (order.py); its
parcel, refund requests and audit trail (fulfilment.py); the money taken for it, which lives
with the rest of its feature (orders/payments/models.py). The app label is `orders` for all."""

from orders.models.fulfilment import (
    Carrier,
    OrderEvent,
    OrderEventKind,
    RefundRequest,
    RefundRequestStatus,
    Shipment,
)
from orders.models.order import ORDER_ADDRESS_FIELDS, PAID_STATUSES, Order, OrderAddress, OrderStatus, SeckillOrder
from orders.payments.models import (
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
