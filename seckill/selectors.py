"""Reads for the seckill pages."""

from typing import Any

from orders.models import Order, OrderStatus, SeckillOrder
from seckill_site.redis import client, keys

QUEUED = 0
FAILED = -1

# What the item page shows a logged-in shopper about one sale (shopper_sale_state).
STATE_NONE = "none"  # never bought, or their order was cancelled: may buy
STATE_QUEUED = "queued"  # the gate took the buy; the order is not written yet
STATE_ORDERED = "ordered"  # an unpaid order: "Pay now" before the deadline
STATE_PAID = "paid"
STATE_FAILED = "failed"  # queued, then the database had no unit left
# A draw (a later feature) adds "entered" (in the draw) and "not_drawn"; the page and
# static/js/seckill.js render any state they are given a message for.


def _result(*, user_id: int, sale_id: int) -> tuple[int, bool]:
    """The answer and whether Redis held it (only Redis remembers a failure: the database
    has no row for an order that was never written)."""
    value = client().get(keys.result(sale_id, user_id))
    if value is not None:
        return int(value), True
    order_id = (
        SeckillOrder.objects.filter(user_id=user_id, sale_id=sale_id, live=True)
        .values_list("order_id", flat=True)
        .first()
    )
    return (order_id if order_id is not None else FAILED), False


def seckill_result(*, user_id: int, sale_id: int) -> int:
    """Seed 000's answer: the order id once written, 0 while queued, -1 failed or never bought.

    Redis holds the answer for a day; after that the database does.
    """
    return _result(user_id=user_id, sale_id=sale_id)[0]


def shopper_sale_state(*, user_id: int, sale_id: int) -> dict[str, Any]:
    """Where this shopper stands with this sale, from the server, so the item page shows the
    same thing after a reload, a stock refresh or on another device: `state` (STATE_*) and,
    with an order, its number, status and pay deadline (epoch seconds)."""
    value, from_redis = _result(user_id=user_id, sale_id=sale_id)
    if value == QUEUED:
        return {"state": STATE_QUEUED}
    if value < 0:
        return {"state": STATE_FAILED if from_redis else STATE_NONE}
    order = Order.objects.filter(pk=value, user_id=user_id).only("order_no", "status", "pay_deadline", "price").first()
    if order is None or order.status == OrderStatus.CANCELLED:
        return {"state": STATE_NONE}
    return {
        "state": STATE_PAID if order.status == OrderStatus.PAID else STATE_ORDERED,
        "orderId": order.pk,
        "orderNo": order.order_no,
        "price": str(order.price),
        "payDeadline": order.pay_deadline.timestamp(),
        "payDeadlineAt": order.pay_deadline,  # for templates; not part of the JSON
    }
