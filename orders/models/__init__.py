"""The app's models, where Django looks for them: the order and its sale side (order.py) and
its audit trail (events.py); the money taken for it (orders/payments/models.py), its parcel
and refund requests (orders/fulfilment/models.py) and its thread with the merchant
(orders/contact/models.py), which live with the rest of their feature.
The app label is `orders` for all."""

from orders.contact.models import MESSAGE_MAX, THREAD_STATUSES, MessageInvalid, OrderMessage, message_text_clean
from orders.fulfilment.models import (
    RETURN_ACTIVE,
    Carrier,
    RefundRequest,
    RefundRequestStatus,
    ReturnRequest,
    ReturnRequestStatus,
    Shipment,
)
from orders.models.events import OrderEvent, OrderEventKind
from orders.models.order import (
    ORDER_ADDRESS_FIELDS,
    PAID_STATUSES,
    Order,
    OrderAddress,
    OrderStatus,
    SeckillOrder,
    goods_name_snapshot,
)
from orders.payments.models import (
    Payment,
    PaymentFailure,
    PaymentMismatch,
    PaymentNotice,
    PaymentStatus,
    Refund,
    RefundKind,
    RefundStatus,
)

__all__ = [
    "MESSAGE_MAX",
    "THREAD_STATUSES",
    "MessageInvalid",
    "message_text_clean",
    "ORDER_ADDRESS_FIELDS",
    "PAID_STATUSES",
    "Carrier",
    "OrderEvent",
    "OrderEventKind",
    "OrderMessage",
    "RefundRequest",
    "RefundRequestStatus",
    "RETURN_ACTIVE",
    "ReturnRequest",
    "ReturnRequestStatus",
    "Shipment",
    "Order",
    "OrderAddress",
    "goods_name_snapshot",
    "OrderStatus",
    "Payment",
    "PaymentFailure",
    "PaymentMismatch",
    "PaymentNotice",
    "PaymentStatus",
    "Refund",
    "RefundKind",
    "RefundStatus",
    "SeckillOrder",
]
