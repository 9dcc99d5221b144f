"""Reads of the seckill app: a shopper's result and standing, and the sales the background work
looks at."""

import logging
from datetime import UTC, datetime, timedelta
from typing import Any

from django.core.cache import cache
from django.db import DatabaseError, connection
from django.db.models import Func, IntegerField
from django.utils import timezone

from orders.models import PAID_STATUSES, Order, OrderStatus, SeckillOrder
from sales import cache_keys, sale_state
from sales.draw_waiting import offers_public, waiting_place
from sales.models import Sale, SaleDraw
from seckill import keys
from seckill_site.redis import client
from seckill_site.redis import now as redis_now

logger = logging.getLogger(__name__)

QUEUED = sale_state.RESULT_QUEUED
FAILED = sale_state.RESULT_FAILED
ENTERED = sale_state.RESULT_ENTERED
NOT_DRAWN = sale_state.RESULT_NOT_DRAWN

# What the item page shows a logged-in shopper about one sale (shopper_sale_state).
STATE_NONE = "none"  # never bought, or their order was cancelled: may buy
STATE_QUEUED = "queued"  # the gate took the buy; the order is not written yet
STATE_ORDERED = "ordered"  # an unpaid order: "Pay now" before the deadline
STATE_PAID = "paid"
STATE_FAILED = "failed"  # queued, then the database had no unit left
STATE_ENTERED = "entered"  # in a draw sale's draw, not made yet (docs/draw.md)
STATE_NOT_DRAWN = "not_drawn"  # in a draw that is made, not among its winners: may buy what comes back


def _result(*, user_id: int, sale_id: int) -> tuple[int, bool]:
    """The answer and whether Redis held it (only Redis remembers a failure)."""
    answer = sale_state.result(sale_id=sale_id, user_id=user_id)
    if answer is not None:
        return answer, True
    order_id = (
        SeckillOrder.objects.filter(user_id=user_id, sale_id=sale_id, live=True)
        .values_list("order_id", flat=True)
        .first()
    )
    return (order_id if order_id is not None else FAILED), False


def seckill_result(*, user_id: int, sale_id: int) -> int:
    """The order id once written, 0 while queued, -1 failed or never bought, -2 entered in the
    sale's draw (not made yet), -3 not drawn. After a day only the database answers."""
    return _result(user_id=user_id, sale_id=sale_id)[0]


def shopper_sale_state(*, user_id: int, sale_id: int) -> dict[str, Any]:
    """Where this shopper stands with this sale, from the server, so the item page shows the
    same thing after a reload, a stock refresh or on another device: `state` (STATE_*) and,
    with an order, its number, status and pay deadline (epoch seconds)."""
    state = _shopper_standing(user_id=user_id, sale_id=sale_id)
    draw_at = sale_state.draw_at(sale_id)
    if draw_at:
        # A draw sale: the shopper's own id (how they find themselves in the published list) and,
        # once drawn, their place in it.
        state["userId"] = user_id
        if state["state"] != STATE_ENTERED and redis_now() >= draw_at:
            state["drawEntry"] = draw_entry(sale_id=sale_id, user_id=user_id)
    return state


def shopper_entry_state(*, user_id: int, sale_id: int) -> dict[str, Any]:
    """shopper_sale_state before a draw sale's start, while it takes entries ahead: nobody can
    hold a unit yet, so only Redis is asked (entered or not), never PostgreSQL, however long the
    entries stay open and however often the page refreshes."""
    if sale_state.result(sale_id=sale_id, user_id=user_id) == ENTERED:
        draw_at = sale_state.draw_at(sale_id)
        state = {"state": STATE_ENTERED, "drawAt": draw_at, "drawAtTime": datetime.fromtimestamp(draw_at, tz=UTC)}
    else:
        state = {"state": STATE_NONE}
    return state | {"userId": user_id}


def _shopper_standing(*, user_id: int, sale_id: int) -> dict[str, Any]:
    value, from_redis = _result(user_id=user_id, sale_id=sale_id)
    if value == QUEUED:
        return {"state": STATE_QUEUED}
    if value == ENTERED:
        draw_at = sale_state.draw_at(sale_id)
        return {"state": STATE_ENTERED, "drawAt": draw_at, "drawAtTime": datetime.fromtimestamp(draw_at, tz=UTC)}
    if value == NOT_DRAWN:
        # Offered a unit that came back (orders.reoffer): their order, even before Redis heard.
        offered = (
            SeckillOrder.objects.filter(user_id=user_id, sale_id=sale_id, live=True)
            .values_list("order_id", flat=True)
            .first()
        )
        if offered is None:
            return {"state": STATE_NOT_DRAWN, "waitingPlace": waiting_place(sale_id=sale_id, user_id=user_id)}
        value = offered
    if value < 0:
        return {"state": STATE_FAILED if from_redis else STATE_NONE}
    order = Order.objects.filter(pk=value, user_id=user_id).only("order_no", "status", "pay_deadline", "price").first()
    if order is None or order.status == OrderStatus.CANCELLED:
        return {"state": STATE_NONE}
    return {
        "state": STATE_PAID if order.status in PAID_STATUSES else STATE_ORDERED,
        "orderId": order.pk,
        "orderNo": order.order_no,
        "price": str(order.price),
        "payDeadline": order.pay_deadline.timestamp(),
        "payDeadlineAt": order.pay_deadline,  # for templates; not part of the JSON
    }


# Sales that ended longer ago than this are left to the reconciler only while reservations of
# theirs wait: none can be made after a sale ends, so theirs only drain.
RECENTLY_ENDED = timedelta(days=1)
# Older sales are looked at in pipelines of this many (one HLEN each).
_OLDER_SALES_PAGE = 1000


def sales_to_reconcile() -> list[int]:
    """The sales the reconciler, the flush sweep and the metrics look at: every sale running,
    upcoming or ended within RECENTLY_ENDED, and any older one with reservations in flight."""
    recent = timezone.now() - RECENTLY_ENDED
    sales = list(Sale.objects.filter(end_at__gte=recent).order_by("pk").values_list("pk", flat=True))
    older = Sale.objects.filter(end_at__lt=recent).order_by("pk").values_list("pk", flat=True)
    last = 0
    while page := list(older.filter(pk__gt=last)[:_OLDER_SALES_PAGE]):
        sales += [sale_id for sale_id, waiting in sale_state.reservations_count(page).items() if waiting]
        last = page[-1]
    return sorted(sales)


def sale_draw_public(*, sale_id: int, lists: bool = False) -> dict[str, Any] | None:
    """What anyone may know of a draw sale's draw (docs/draw.md), None without a draw: the seed's
    SHA-256 and when entries open; once drawn, the seed, units and counts, and with `lists` the
    sorted entrant ids and winners, which are megabytes and never change, so they are cached,
    and the offers of units that came back (sales.draw_waiting), which change, so they are not."""
    if lists:
        cached = cache.get(cache_keys.draw_public(sale_id))
        if cached is not None:
            return {**cached, "offers": offers_public(sale_id=sale_id)}
    draw = (
        SaleDraw.objects.filter(sale_id=sale_id)
        .select_related("sale")
        .defer("entrant_ids", "winner_ids")
        .annotate(entrants=Func("entrant_ids", function="jsonb_array_length", output_field=IntegerField()))
        .first()
    )
    if draw is None:
        return None
    public: dict[str, Any] = {
        "saleId": sale_id,
        "seedSha256": draw.seed_sha256,
        "drawAt": draw.sale.draw_at,
        "drawWindowS": draw.sale.draw_window_s,
        "entriesOpenAt": draw.sale.entries_from,
        "drawn": draw.drawn_at is not None,
    }
    if draw.drawn_at is None:
        return public
    public.update(seed=draw.seed, units=draw.units, drawnAt=draw.drawn_at, entrants=draw.entrants)
    if lists:
        entrant_ids, winner_ids = SaleDraw.objects.filter(pk=draw.pk).values_list("entrant_ids", "winner_ids").get()
        public.update(entrantIds=entrant_ids, winnerIds=winner_ids)
        cache.set(cache_keys.draw_public(sale_id), public, timeout=24 * 60 * 60)
        public = {**public, "offers": offers_public(sale_id=sale_id)}
    return public


# How long the item page's refresh reuses a draw's summary: the seed shows within this of the draw.
DRAW_SUMMARY_SECONDS = 2
# Past that, kept for when PostgreSQL cannot answer (a failover): the draw drops it once made.
DRAW_SUMMARY_KEEP_SECONDS = 60 * 60


def sale_draw_summary(*, sale_id: int) -> dict[str, Any] | None:
    """sale_draw_public without the entrant list, with the winners (at most the units), cached
    briefly: the item page's refresh asks for it every few seconds per shopper. While PostgreSQL
    fails, the summary last read, fresh again for a moment, so not every reader asks."""
    key = cache_keys.draw_summary(sale_id)
    cached = cache.get(key)
    if cached is not None and redis_now() < cached[0]:
        return cached[1] or None
    try:
        public = sale_draw_public(sale_id=sale_id)
        if public is not None and public["drawn"]:
            public["winnerIds"] = SaleDraw.objects.filter(sale_id=sale_id).values_list("winner_ids", flat=True).first()
    except DatabaseError as error:
        if cached is None:
            raise
        logger.warning("sale %s's draw summary served from its kept copy: %r", sale_id, error)
        public = cached[1] or None
    cache.set(key, (redis_now() + DRAW_SUMMARY_SECONDS, public or {}), DRAW_SUMMARY_SECONDS + DRAW_SUMMARY_KEEP_SECONDS)
    return public


# Once drawn, a shopper's place in the list never changes: kept as long as the published lists.
DRAW_ENTRY_SECONDS = 24 * 60 * 60


def draw_entry(*, sale_id: int, user_id: int) -> dict[str, Any] | None:
    """The shopper's place in a made draw: `number`, their 1-based position in the published,
    sorted entrant list (anyone can check it: entrantIds[number - 1] is their id), `entrants`
    and `won`; None before the draw or when they did not enter. One scan of the stored list the
    first time a shopper asks, then cached."""
    key = cache_keys.draw_entry(sale_id, user_id)
    cached = cache.get(key)
    if cached is not None:
        return cached or None
    with connection.cursor() as cursor:
        cursor.execute(_DRAW_ENTRY, {"sale_id": sale_id, "user_id": user_id})
        row = cursor.fetchone()
    if row is None:
        drawn = SaleDraw.objects.filter(sale_id=sale_id, drawn_at__isnull=False).exists()
        if drawn:  # not an entrant: remembered too, so a poll does not scan the list again
            cache.set(key, {}, DRAW_ENTRY_SECONDS)
        return None
    entry = {"number": row[0], "entrants": row[1], "won": row[2]}
    cache.set(key, entry, DRAW_ENTRY_SECONDS)
    return entry


_DRAW_ENTRY = f"""
SELECT entry.number, jsonb_array_length(draw.entrant_ids), draw.winner_ids @> to_jsonb(%(user_id)s::bigint)
FROM {SaleDraw._meta.db_table} AS draw,
     jsonb_array_elements(draw.entrant_ids) WITH ORDINALITY AS entry(id, number)
WHERE draw.sale_id = %(sale_id)s AND draw.drawn_at IS NOT NULL AND entry.id = to_jsonb(%(user_id)s::bigint)
"""


def captcha_pool_size() -> int:
    """Captchas drawn ahead and not handed out yet (seckill.services.paths)."""
    return client().llen(keys.captcha_pool())
