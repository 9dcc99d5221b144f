"""Reads of the seckill app: a shopper's result, and the sales the background work looks at."""

from datetime import timedelta

from django.utils import timezone

from goods.models import SeckillGoods
from orders.models import SeckillOrder
from seckill_site import sale_state

QUEUED = sale_state.RESULT_QUEUED
FAILED = sale_state.RESULT_FAILED


def seckill_result(*, user_id: int, sale_id: int) -> int:
    """The order id once written, 0 while queued, -1 failed or never bought.

    Redis holds the answer for a day; after that the database does.
    """
    answer = sale_state.result(sale_id=sale_id, user_id=user_id)
    if answer is not None:
        return answer
    order_id = (
        SeckillOrder.objects.filter(user_id=user_id, sale_id=sale_id, live=True)
        .values_list("order_id", flat=True)
        .first()
    )
    return order_id if order_id is not None else FAILED


# Sales that ended longer ago than this are left to the reconciler only while reservations of
# theirs wait: none can be made after a sale ends, so theirs only drain.
RECENTLY_ENDED = timedelta(days=1)
# Older sales are looked at in pipelines of this many (one HLEN each).
_OLDER_SALES_PAGE = 1000


def sales_to_reconcile() -> list[int]:
    """The sales the reconciler, the flush sweep and the metrics look at: every sale running,
    upcoming or ended within RECENTLY_ENDED, and any older one with reservations in flight."""
    recent = timezone.now() - RECENTLY_ENDED
    sales = list(SeckillGoods.objects.filter(end_at__gte=recent).order_by("pk").values_list("pk", flat=True))
    older = SeckillGoods.objects.filter(end_at__lt=recent).order_by("pk").values_list("pk", flat=True)
    last = 0
    while page := list(older.filter(pk__gt=last)[:_OLDER_SALES_PAGE]):
        sales += [sale_id for sale_id, waiting in sale_state.reservations_count(page).items() if waiting]
        last = page[-1]
    return sorted(sales)
