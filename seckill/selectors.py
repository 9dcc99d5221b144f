"""Reads for the seckill pages."""

from orders.models import SeckillOrder
from seckill_site.redis import client, keys

QUEUED = 0
FAILED = -1


def seckill_result(*, user_id: int, sale_id: int) -> int:
    """Seed 000's answer: the order id once written, 0 while queued, -1 failed or never bought.

    Redis holds the answer for a day; after that the database does.
    """
    value = client().get(keys.result(sale_id, user_id))
    if value is not None:
        return int(value)
    order_id = (
        SeckillOrder.objects.filter(user_id=user_id, sale_id=sale_id, live=True)
        .values_list("order_id", flat=True)
        .first()
    )
    return order_id if order_id is not None else FAILED
