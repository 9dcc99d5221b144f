"""Writes on orders: the seckill order writer's database half, cancelling (which returns the
unit) and the audit trail every move writes. Paying, closing and refunds are orders.payments';
shipping and refund requests orders.fulfilment's."""

import enum
import json
import logging
from dataclasses import dataclass
from datetime import timedelta
from functools import partial

from django.conf import settings
from django.db import IntegrityError, connection, transaction
from django.db.models import F
from django.utils import timezone
from django.utils.translation import gettext as _
from django.utils.translation import gettext_noop
from kombu.exceptions import OperationalError as BrokerError
from redis.exceptions import RedisError

from orders import reoffer
from orders.models import (
    Order,
    OrderEvent,
    OrderEventKind,
    OrderStatus,
    Payment,
    PaymentStatus,
    SeckillOrder,
    goods_name_snapshot,
)
from sales import sale_state
from sales.models import OfferOutcome, Sale, StockChange
from sales.read_model import SaleView
from sales.selectors import sale_get
from sales.services import sale_pages_drop, sale_stock_lock, stock_audit_record
from seckill_site.publish import task_publish

logger = logging.getLogger(__name__)


class WriteOutcome(enum.Enum):
    CREATED = "created"
    ALREADY_WRITTEN = "already written"  # a redelivered flush: its order exists
    DUPLICATE = "duplicate"  # the user already holds a live order of this sale
    SOLD_OUT = "sold out"  # the database had no unit left


@dataclass(frozen=True)
class WriteResult:
    outcome: WriteOutcome
    order_id: int | None = None
    live: bool = True  # ALREADY_WRITTEN: False when that order was cancelled since


ORDER_NUMBER_SEQUENCE = "orders_order_number_seq"  # orders/migrations/0003


def order_number_next() -> str:
    """`yyyymmddHHMMSS` + a PostgreSQL sequence value: sortable, not a bare primary key, and
    unique by construction — a sequence never hands a value out twice, through any Redis
    failover or restart, so the unique index never has to catch a collision."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT nextval(%s)", [ORDER_NUMBER_SEQUENCE])
        (sequence,) = cursor.fetchone()
    return f"{timezone.now():%Y%m%d%H%M%S}{sequence:010d}"


def _written(request_id: str) -> WriteResult | None:
    """The order this request id already wrote, if any (live or cancelled since)."""
    row = SeckillOrder.objects.filter(request_id=request_id).values_list("order_id", "live").first()
    return WriteResult(WriteOutcome.ALREADY_WRITTEN, row[0], live=row[1]) if row is not None else None


def order_create_from_seckill(*, sale_id: int, user_id: int, request_id: str) -> WriteResult:
    """Write the order for a unit Redis handed out. Idempotent per request id.

    The conditional UPDATE is the database's own stock guard and the partial unique index
    the guard against double buying, so even a stale Redis counter cannot oversell. The
    unique request id makes a redelivered message roll back and find its order; the common
    case (first delivery) costs one transaction: UPDATE, two INSERTs, COMMIT.
    """
    sale = sale_get(sale_id=sale_id)  # name and price for the snapshot, from the short Redis cache
    if sale is None:
        return WriteResult(WriteOutcome.SOLD_OUT)
    try:
        with transaction.atomic():
            sale_stock_lock(sale_id=sale_id)
            taken = Sale.objects.filter(pk=sale_id, stock_count__gt=0).update(stock_count=F("stock_count") - 1)
            if not taken:
                # A redelivered flush whose order took the last unit finds it here.
                return _written(request_id) or WriteResult(WriteOutcome.SOLD_OUT)
            order = Order.objects.create(
                order_no=order_number_next(),
                user_id=user_id,
                goods_id=sale.goods_id,
                sale_id=sale_id,
                **goods_name_snapshot(sale.goods_names),
                price=sale.sale_price,
                pay_deadline=timezone.now() + timedelta(seconds=settings.SECKILL_ORDER_TTL),
            )
            SeckillOrder.objects.create(user_id=user_id, sale_id=sale_id, order=order, request_id=request_id)
            stock_audit_record(
                sale_id=sale_id, delta=-1, reason=StockChange.PURCHASE, actor_id=user_id, reference=order.order_no
            )
            return WriteResult(WriteOutcome.CREATED, order.pk)
    except IntegrityError:
        # Rolled back, stock included: this request or this user already has its order (a
        # redelivery, or a second unit after Redis lost its buyer set).
        same_request = _written(request_id)
        if same_request is not None:
            return same_request
        live = (
            SeckillOrder.objects.filter(user_id=user_id, sale_id=sale_id, live=True)
            .values_list("order_id", flat=True)
            .first()
        )
        if live is not None:
            return WriteResult(WriteOutcome.DUPLICATE, live)
        raise


# The batch's orders and seckill orders in one statement: the rows are built by PostgreSQL
# from two arrays (unnest), the order numbers drawn from the same sequence as
# order_number_next, and the seckill orders joined to the orders just inserted. Django's
# bulk_create cost ~200 µs of Python per row here, more than the database's own work. The
# columns are those of Order and SeckillOrder (a test compares a batch order with one the
# per-request writer made, field by field, so a new column cannot be forgotten silently).
_BATCH_INSERT = """
WITH batch AS MATERIALIZED (
    SELECT r.request_id, r.user_id, %(stamp)s || lpad(nextval(%(sequence)s)::text, 10, '0') AS order_no
    FROM unnest(%(request_ids)s::varchar[], %(user_ids)s::bigint[]) AS r (request_id, user_id)
), made AS (
    INSERT INTO {order} (order_no, user_id, goods_id, sale_id, goods_name, goods_names, price, quantity,
                         status, created_at, pay_deadline, cancel_reason)
    SELECT order_no, user_id, %(goods_id)s, %(sale_id)s, %(goods_name)s, %(goods_names)s::jsonb, %(price)s, 1,
           %(status)s,
           %(now)s, %(deadline)s, ''
    FROM batch
    RETURNING id, order_no
), linked AS (
    INSERT INTO {seckill_order} (user_id, sale_id, order_id, request_id, live, created_at)
    SELECT batch.user_id, %(sale_id)s, made.id, batch.request_id, true, %(now)s
    FROM made JOIN batch USING (order_no)
    RETURNING request_id, order_id
)
SELECT linked.request_id, linked.order_id, made.order_no FROM linked JOIN made ON made.id = linked.order_id
"""


def _orders_insert(*, sale_id: int, sale: SaleView, reservations: dict[str, int]) -> list[tuple[str, int, str]]:
    """Insert one order and one seckill order per reservation (request id -> user id);
    (request id, order id, order number) of each."""
    now = timezone.now()
    names = goods_name_snapshot(sale.goods_names)
    sql = _BATCH_INSERT.format(
        order=connection.ops.quote_name(Order._meta.db_table),
        seckill_order=connection.ops.quote_name(SeckillOrder._meta.db_table),
    )
    with connection.cursor() as cursor:
        cursor.execute(
            sql,
            {
                "stamp": f"{now:%Y%m%d%H%M%S}",
                "sequence": ORDER_NUMBER_SEQUENCE,
                "request_ids": list(reservations),
                "user_ids": list(reservations.values()),
                "goods_id": sale.goods_id,
                "sale_id": sale_id,
                "goods_name": names["goods_name"],
                "goods_names": json.dumps(names["goods_names"]),
                "price": sale.sale_price,
                "status": OrderStatus.UNPAID.value,
                "now": now,
                "deadline": now + timedelta(seconds=settings.SECKILL_ORDER_TTL),
            },
        )
        return cursor.fetchall()


def orders_create_from_seckill_batch(*, sale_id: int, reservations: dict[str, int]) -> dict[str, int] | None:
    """Write the orders of many reservations (request id -> user id) of one sale in one
    transaction: one conditional UPDATE of the stock by their count, one statement inserting
    the orders and the seckill orders, one stock audit row. Request id -> order id.

    Returns None, having written nothing, when the database refuses the batch as a whole: too
    little stock, one shopper twice, or a unique index — a request id already written (a
    redelivered flush) or a shopper who already holds a live order of the sale. The caller
    then writes those reservations one by one with order_create_from_seckill, and the
    database decides each as it does for a single order (a redelivery finds its order there).
    Nothing is looked up first: the indexes are the check, and the common batch pays for none.
    """
    sale = sale_get(sale_id=sale_id)
    users = list(reservations.values())
    if sale is None or not reservations or len(set(users)) != len(users):
        return None
    try:
        with transaction.atomic():
            sale_stock_lock(sale_id=sale_id)
            taken = Sale.objects.filter(pk=sale_id, stock_count__gte=len(reservations)).update(
                stock_count=F("stock_count") - len(reservations)
            )
            if not taken:
                return None
            created = _orders_insert(sale_id=sale_id, sale=sale, reservations=reservations)
            if len(created) != len(reservations):  # never expected: roll back rather than half-write
                raise RuntimeError(f"batch insert wrote {len(created)} orders for {len(reservations)} reservations")
            numbers = sorted(order_no for _request_id, _order_id, order_no in created)
            stock_audit_record(
                sale_id=sale_id,
                delta=-len(created),
                reason=StockChange.PURCHASE,
                actor_id=users[0] if len(users) == 1 else None,  # one buy: its buyer
                reference=f"{numbers[0]}…{numbers[-1]}" if len(numbers) > 1 else numbers[0],
                detail={"orders": len(created)},
            )
            return {request_id: order_id for request_id, order_id, _order_no in created}
    except IntegrityError:
        # Rolled back whole, stock included: one by one sorts out which reservation it was.
        return None


# --- the order lifecycle -----------------------------------------------------------------------


class OrderStateError(Exception):
    """The order cannot make this move from its current state; the message is for the shopper."""


def order_event_record(*, order_id: int, kind: OrderEventKind, actor_id: int | None = None, note: str = "") -> None:
    """One line of the order's audit trail. Call it inside the move's transaction, after the
    order's row lock, so the trail holds exactly the moves that happened, in their order."""
    OrderEvent.objects.create(order_id=order_id, kind=kind, actor_id=actor_id, note=note[:200])


# Cancel reasons are stored in English and translated where shown.
REASON_EXPIRED = gettext_noop("expired")
REASON_SHOPPER = gettext_noop("cancelled by shopper")
REASON_MERCHANT = gettext_noop("cancelled by merchant")
# Who cancelled, as the stock log records it (StockAuditDetail); an expiry is its own reason.
_CANCELLED_BY = {REASON_SHOPPER: "shopper", REASON_MERCHANT: "merchant"}


def order_refusal(order: Order, action: str) -> OrderStateError:
    """Why `order` cannot be `action` ("paid" or "cancelled") in its state, for the shopper."""
    paying = action == "paid"
    if order.status == OrderStatus.CANCELLED:
        reason = _(order.cancel_reason or "cancelled")
        if paying:
            return OrderStateError(_("This order was cancelled (%(reason)s); it cannot be paid.") % {"reason": reason})
        return OrderStateError(_("This order was already cancelled (%(reason)s).") % {"reason": reason})
    if order.status in (OrderStatus.PAID, OrderStatus.SHIPPED, OrderStatus.DELIVERED):
        if paying:
            return OrderStateError(_("This order is already paid."))
        return OrderStateError(_("This order is already paid; it cannot be cancelled."))
    if order.status == OrderStatus.REFUNDED:
        return OrderStateError(_("This order was refunded."))
    return OrderStateError(_("The time to pay this order ran out; it cannot be paid."))


def order_cancel(*, order_id: int, reason: str, actor_id: int | None = None) -> bool:
    """unpaid -> cancelled, returning the unit everywhere. Idempotent: False when the order
    was not unpaid any more (already cancelled, or paid), or an attempt to pay it is still
    open, and nothing changes then.

    In one transaction, under the sale's stock lock, the order is cancelled, its seckill order
    stops being live (so the shopper may buy again), the sale's database stock goes up by one,
    and the sale's ticket is read (sales.sale_state). After the commit the unit goes back
    to Redis with that ticket: exactly once, and not at all if a load of the sale from the
    database came in between (that load counted it). Web processes notice the returned unit
    within a second, when their sold-out marks lapse. The stock audit records the unit as an
    expiry or a cancellation by `actor_id`.
    """
    sale_id = SeckillOrder.objects.filter(order_id=order_id).values_list("sale_id", flat=True).first()
    with transaction.atomic():
        if sale_id is not None:
            sale_stock_lock(sale_id=sale_id)  # first: as the writers and the reconciler take it
        if not Order.objects.select_for_update().filter(pk=order_id, status=OrderStatus.UNPAID).exists():
            return False
        # Never while an attempt to pay it is open: its unit would be sold twice if that payment
        # then went through (orders.payments.closing closes attempts first). Read after the row
        # lock, which starting an attempt holds while it writes one, so none can slip in.
        if Payment.objects.filter(order_id=order_id, status=PaymentStatus.OPEN).exists():
            return False
        Order.objects.filter(pk=order_id).update(
            status=OrderStatus.CANCELLED, cancelled_at=timezone.now(), cancel_reason=reason
        )
        order_event_record(order_id=order_id, kind=OrderEventKind.CANCELLED, actor_id=actor_id, note=reason)
        seckill_order = SeckillOrder.objects.filter(order_id=order_id).select_related("order").first()
        if seckill_order is None:
            return True  # not a seckill order: no unit to return
        SeckillOrder.objects.filter(pk=seckill_order.pk).update(live=False)
        Sale.objects.filter(pk=seckill_order.sale_id).update(stock_count=F("stock_count") + 1)
        stock_audit_record(
            sale_id=seckill_order.sale_id,
            delta=1,
            reason=StockChange.EXPIRY if reason == REASON_EXPIRED else StockChange.CANCELLATION,
            actor_id=actor_id,
            reference=seckill_order.order.order_no,
            detail={"cancelled_by": _CANCELLED_BY[reason]} if reason in _CANCELLED_BY else {},
        )
        reoffer.offer_close(
            order_id=order_id, outcome=OfferOutcome.EXPIRED if reason == REASON_EXPIRED else OfferOutcome.CANCELLED
        )
        # After a draw the unit goes to the next entrant waiting, in this transaction.
        offer = reoffer.offer_make(
            sale_id=seckill_order.sale_id, returned_order_id=order_id, order_number=order_number_next
        )
        if offer is not None:
            transaction.on_commit(partial(_offer_notify_publish, seckill_order.sale_id), robust=True)
        try:
            ticket = sale_state.ticket(seckill_order.sale_id)
        except RedisError:
            # A cancellation does not wait for Redis: the reconciler sees the unit missing from
            # Redis within a minute and loads the sale again.
            logger.warning("cancelled order %s without returning its unit to Redis", order_id, exc_info=True)
            return True
        sale_id, user_id, request_id = seckill_order.sale_id, seckill_order.user_id, seckill_order.request_id
        # robust: likewise if Redis fails after the commit.
        if offer is not None:
            transaction.on_commit(
                partial(
                    sale_state.unit_hand_over,
                    sale_id=sale_id,
                    user_id=user_id,
                    order_id=order_id,
                    request_id=request_id,
                    ticket=ticket,
                    to_user_id=offer.user_id,
                    to_order_id=offer.order_id,
                ),
                robust=True,
            )
            # After the hand-over, so the entrant's answer is their order when the list moves.
            transaction.on_commit(partial(reoffer.waitlist_publish_quietly, sale_id), robust=True)
            return True
        transaction.on_commit(
            lambda: sale_state.unit_return(
                sale_id=sale_id, user_id=user_id, order_id=order_id, request_id=request_id, ticket=ticket
            ),
            robust=True,
        )
        transaction.on_commit(partial(reoffer.waitlist_publish_quietly, sale_id), robust=True)
        # Its pages may say "sold out": a unit is back on sale.
        transaction.on_commit(lambda: sale_pages_drop(sale_id=sale_id), robust=True)
    return True


def _offer_notify_publish(sale_id: int) -> None:
    """The offered entrant's message (seckill.services.draw_notices); beat's sweep sends it
    when the broker refuses."""
    try:
        task_publish("seckill.draw_offers_notify", kwargs={"sale_id": sale_id})
    except (BrokerError, OSError, RedisError):
        logger.exception("publishing the offer's message of sale %s failed", sale_id)
