"""Writes on orders: creating a seckill order (the Celery order writer's database half)."""

import enum
from dataclasses import dataclass
from datetime import timedelta

from django.conf import settings
from django.db import IntegrityError, transaction
from django.db.models import F
from django.utils import timezone

from goods.models import SeckillGoods
from orders.models import Order, SeckillOrder
from seckill import keys
from seckill.redis import client

ORDER_NUMBER_ATTEMPTS = 3


class WriteOutcome(enum.Enum):
    CREATED = "created"
    ALREADY_WRITTEN = "already written"  # redelivered message: its order exists
    DUPLICATE = "duplicate"  # the user already holds a live order of this sale
    SOLD_OUT = "sold out"  # the database had no unit left


@dataclass(frozen=True)
class WriteResult:
    outcome: WriteOutcome
    order_id: int | None = None


def order_number_next() -> str:
    """`yyyymmddHHMMSS` + 8 digits of a Redis counter: sortable, unique, not a bare primary key.

    If Redis lost the counter, numbers repeat only within the same second as before the loss;
    the unique index catches that and the caller draws again.
    """
    sequence = client().incr(keys.ORDER_SEQUENCE)
    return f"{timezone.now():%Y%m%d%H%M%S}{sequence % 10**8:08d}"


def order_create_from_seckill(*, sale_id: int, user_id: int, request_id: str) -> WriteResult:
    """Write the order for a unit Redis handed out. Idempotent per request id.

    The conditional UPDATE is the database's own stock guard and the partial unique index
    the guard against double buying, so even a stale Redis counter cannot oversell.
    """
    existing = SeckillOrder.objects.filter(request_id=request_id).values_list("order_id", flat=True).first()
    if existing is not None:
        return WriteResult(WriteOutcome.ALREADY_WRITTEN, existing)
    sale = SeckillGoods.objects.select_related("goods").filter(pk=sale_id).first()
    if sale is None:
        return WriteResult(WriteOutcome.SOLD_OUT)
    for _ in range(ORDER_NUMBER_ATTEMPTS):
        try:
            with transaction.atomic():
                taken = SeckillGoods.objects.filter(pk=sale_id, stock_count__gt=0).update(
                    stock_count=F("stock_count") - 1
                )
                if not taken:
                    return WriteResult(WriteOutcome.SOLD_OUT)
                order = Order.objects.create(
                    order_no=order_number_next(),
                    user_id=user_id,
                    goods_id=sale.goods_id,
                    sale_id=sale_id,
                    goods_name=sale.goods.name,
                    price=sale.seckill_price,
                    pay_deadline=timezone.now() + timedelta(seconds=settings.SECKILL_ORDER_TTL),
                )
                SeckillOrder.objects.create(user_id=user_id, sale_id=sale_id, order=order, request_id=request_id)
                return WriteResult(WriteOutcome.CREATED, order.pk)
        except IntegrityError:
            # Rolled back, stock included. Either this request or this user already has its
            # order (a concurrent redelivery, or a second unit after Redis lost its buyer set),
            # or the order number collided and we draw again.
            same_request = SeckillOrder.objects.filter(request_id=request_id).values_list("order_id", flat=True).first()
            if same_request is not None:
                return WriteResult(WriteOutcome.ALREADY_WRITTEN, same_request)
            live = (
                SeckillOrder.objects.filter(user_id=user_id, sale_id=sale_id, live=True)
                .values_list("order_id", flat=True)
                .first()
            )
            if live is not None:
                return WriteResult(WriteOutcome.DUPLICATE, live)
    raise RuntimeError(f"could not draw a unique order number in {ORDER_NUMBER_ATTEMPTS} attempts")
