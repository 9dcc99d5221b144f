"""Which orders the merchant's shipping desk lists (orders.fulfilment.admin)."""

from django.db.models import Exists, OuterRef, QuerySet

from orders.fulfilment.models import RefundRequest, RefundRequestStatus
from orders.models import Order, OrderStatus


def orders_to_ship(orders: QuerySet[Order]) -> QuerySet[Order]:
    """Of `orders`, the ones to ship now: paid, with no refund request waiting for the
    merchant's answer (order_ship refuses those until it is answered)."""
    held = RefundRequest.objects.filter(order_id=OuterRef("pk"), status=RefundRequestStatus.OPEN)
    return orders.filter(status=OrderStatus.PAID).exclude(Exists(held))
