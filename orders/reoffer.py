"""Units that come back after a draw go down its published ranking (docs/draw.md, "Units that
come back"): the unit of a cancelled or expired order of a draw sale is offered to the next
entrant of the waiting list (sales.draw_waiting) as an order of their own, with the usual time
to pay counted from the offer; once the list is exhausted, units go back to the stock.
`waitlist_publish` keeps the list's copy in Redis (sales.sale_state.waitlist) after every
commit that moves it.

`offer_make` runs inside the cancellation's transaction, after it took the sale's stock lock:
the cancellation and the offer's order commit together, the database's stock never shows the
unit free, and the Redis step after the commit (sale_state.unit_hand_over) moves the buyer,
never the stock, so no buy can take the unit in between. A unit is offered once
(SaleDrawOffer.returned_order_id is unique and the cancellation happens once); a crash before
the Redis step leaves Redis one buyer behind, which the reconciler's load mends from the
database, as it does for a cancellation's own lost step.
"""

import logging
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta

from django.conf import settings
from django.db.models import F
from django.utils import timezone
from redis.exceptions import RedisError

from orders.models import Order, OrderStatus, SeckillOrder, goods_name_snapshot
from sales import sale_state
from sales.draw_waiting import turns_taken, waiting_list, waiting_next
from sales.models import OfferOutcome, Sale, SaleDraw, SaleDrawOffer, StockChange
from sales.read_model import SaleView
from sales.selectors import sale_get
from sales.services import stock_audit_record
from users.models import User

logger = logging.getLogger(__name__)


def offer_request_id(sale_id: int, user_id: int) -> str:
    """The offer's order's request id: one offer per entrant, so one order."""
    return f"offer-{sale_id}-{user_id}"


@dataclass(frozen=True)
class Offer:
    user_id: int
    order_id: int
    rank: int
    expires_at: datetime


def _passed_over(*, sale_id: int, user_id: int) -> bool:
    """Is the entrant's turn passed: their account is gone or closed, or they hold a unit of
    the sale already (a live order, or one in flight in Redis's buyer set)?"""
    if not User.objects.filter(pk=user_id, is_active=True).exists():
        return True
    if SeckillOrder.objects.filter(sale_id=sale_id, user_id=user_id, live=True).exists():
        return True
    try:
        return sale_state.buyer_is(sale_id=sale_id, user_id=user_id)
    except RedisError:
        return False  # the order's unique index still refuses a second live order


def offer_make(*, sale_id: int, returned_order_id: int, order_number: Callable[[], str]) -> Offer | None:
    """Offer the unit of `returned_order_id`, whose cancellation this transaction holds under
    the sale's stock lock, to the next entrant waiting: their order and the offer's record.
    None when the sale has no applied draw, has ended, or nobody waits: the unit goes back to
    the stock. `order_number` is orders.services.order_number_next, which calls this."""
    now = timezone.now()
    draw = (
        SaleDraw.objects.filter(sale_id=sale_id, applied_at__isnull=False, sale__end_at__gt=now)
        .only("pk", "seed", "drawn_at")
        .first()
    )
    if draw is None or SaleDrawOffer.objects.filter(returned_order_id=returned_order_id).exists():
        return None
    sale = sale_get(sale_id=sale_id)
    if sale is None:
        return None
    expires_at = now + timedelta(seconds=settings.SECKILL_ORDER_TTL)
    for rank, user_id in waiting_next(draw):
        if _passed_over(sale_id=sale_id, user_id=user_id):
            SaleDrawOffer.objects.create(
                draw=draw, rank=rank, user_id=user_id, offered_at=now, expires_at=now, outcome=OfferOutcome.SKIPPED
            )
            continue
        order = _order_create(sale=sale, user_id=user_id, pay_deadline=expires_at, order_number=order_number)
        SaleDrawOffer.objects.create(
            draw=draw,
            rank=rank,
            user_id=user_id,
            returned_order_id=returned_order_id,
            order_id=order.pk,
            offered_at=now,
            expires_at=expires_at,
        )
        return Offer(user_id=user_id, order_id=order.pk, rank=rank, expires_at=expires_at)
    return None


def _order_create(*, sale: SaleView, user_id: int, pay_deadline: datetime, order_number: Callable[[], str]) -> Order:
    """The offered entrant's order, as the order writer makes one, taking the unit the
    cancellation just put back in the database's stock."""
    order = Order.objects.create(
        order_no=order_number(),
        user_id=user_id,
        goods_id=sale.goods_id,
        sale_id=sale.sale_id,
        **goods_name_snapshot(sale.goods_names),
        price=sale.sale_price,
        pay_deadline=pay_deadline,
    )
    SeckillOrder.objects.create(
        user_id=user_id, sale_id=sale.sale_id, order=order, request_id=offer_request_id(sale.sale_id, user_id)
    )
    Sale.objects.filter(pk=sale.sale_id).update(stock_count=F("stock_count") - 1)
    stock_audit_record(
        sale_id=sale.sale_id, delta=-1, reason=StockChange.PURCHASE, actor_id=user_id, reference=order.order_no
    )
    return order


def offer_close(*, order_id: int, outcome: OfferOutcome) -> None:
    """The offer whose order this is was paid, or its order cancelled or expired."""
    SaleDrawOffer.objects.filter(order_id=order_id, outcome=OfferOutcome.OPEN).update(outcome=outcome)


def waitlist_publish(sale_id: int) -> bool:
    """The sale's waiting list to Redis, from the database as committed: its places the first
    time, then its turns and the units not paid yet. Call it after the commit of a draw's
    application, an offer, a payment or a cancellation; a sale without an applied draw is left
    alone (False). Redis is read before the database, so a reservation the writer turns into
    an order in between is counted twice, never missed: the list never says "sold out" early."""
    draw = SaleDraw.objects.filter(sale_id=sale_id, applied_at__isnull=False).only("pk", "seed", "drawn_at").first()
    if draw is None:
        return False
    stamp = sale_state.waitlist_stamp(sale_id)
    in_flight = sale_state.reservations_count([sale_id])[sale_id]
    unpaid = SeckillOrder.objects.filter(sale_id=sale_id, live=True, order__status=OrderStatus.UNPAID).count()
    waiting = waiting_list(draw)
    places = None if sale_state.waitlist_published(sale_id) else [user_id for _rank, user_id in waiting]
    sale_state.waitlist_write(
        sale_id=sale_id,
        user_ids=places,
        length=len(waiting),
        turns=turns_taken(draw),
        unpaid=in_flight + unpaid,
        stamp=stamp,
    )
    return True


def waitlist_publish_quietly(sale_id: int) -> None:
    """waitlist_publish for an after-commit hook: Redis failing is logged, never raised, and
    the list's copy is mended by the next commit that moves it, or the next poll Django answers."""
    try:
        waitlist_publish(sale_id)
    except RedisError:
        logger.warning("waiting list of sale %s not published", sale_id, exc_info=True)
