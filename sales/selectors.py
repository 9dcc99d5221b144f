"""Reads on sale events, cached in Redis so hot pages rarely reach PostgreSQL."""

import logging
import time
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Any

from django.core.cache import cache
from django.db import DatabaseError
from django.db.models import Count, Q, QuerySet, Sum
from django.utils import timezone
from django.utils.translation import gettext as _
from django.utils.translation import ngettext

from sales import cache_keys as keys
from sales import sale_state
from sales.models import Sale, SaleStatus, StockAudit, StockChange
from sales.read_model import SaleDetail, SaleEntries, SaleListRow, SalePage, SaleView
from seckill_site.redis import lock_try
from seckill_site.redis import now as redis_now
from seckill_site.redis.keys import jittered
from seckill_site.translated import texts_of
from users.merchants import visible_to_merchant
from users.models import User

logger = logging.getLogger(__name__)


def _sale_view(sale: Sale, *, stock_offered: int | None = None) -> SaleView:
    goods = sale.goods
    return SaleView(
        sale_id=sale.pk,
        goods_id=goods.pk,
        owner_id=goods.owner_id,
        goods_names=texts_of(goods, "name"),
        goods_titles=texts_of(goods, "title"),
        goods_image=goods.image.url if goods.image else None,
        goods_details=texts_of(goods, "detail"),
        goods_price=goods.price,
        goods_stock=goods.stock,
        sale_price=sale.seckill_price,
        stock_count=sale.stock_count,
        start_at=sale.start_at,
        end_at=sale.end_at,
        start_epoch=sale.start_at.timestamp(),
        end_epoch=sale.end_at.timestamp(),
        entries_epoch=sale.entries_from.timestamp() if sale.entries_from else None,
        draw_epoch=sale.draw_at.timestamp() if sale.draw_at else None,
        stock_offered=stock_offered,
    )


# A reader that finds no entry at all while another process reads the sale from PostgreSQL
# polls for that process's entry this long, then reads PostgreSQL itself rather than fail.
SALE_CACHE_WAIT_SECONDS = 1.0
SALE_CACHE_POLL_SECONDS = 0.02


# What the sale cache holds per sale: SaleView.cache_row's plain dict (never a dataclass, so
# every process of a rolling deploy reads every other's entries).
CacheRow = dict[str, Any]


def sale_get(*, sale_id: int) -> SaleView | None:
    """The sale with its goods, from a short Redis cache; None when unknown.

    A hit is one Redis GET. Each entry says until when it is fresh (by Redis's clock) and
    stays in Redis a while longer: once it is stale, the one process that takes the sale's
    cache lock reads PostgreSQL again while every other reader goes on serving the stale copy,
    so a hot sale whose entry expires under a burst costs one query, not one per process.
    With no entry at all (the first read, or one dropped after an edit) the others wait
    briefly for that process's entry instead. Unknown ids are remembered for a while so a
    client looping over bad ids costs Redis reads, not PostgreSQL queries.

    Past that, the entry is kept for when PostgreSQL cannot answer (a failover): the reader
    that finds it failing serves the kept copy, the last one committed since an edit drops it,
    and stores it fresh for a moment so the other readers serve it without asking too; a
    reader that waited for a holder in vain serves it too rather than queue on PostgreSQL.
    The stock shown beside it is Redis's live count all the same.
    """
    row = _sale_row_get(sale_id)
    return SaleView.from_cache_row(row) if row is not None else None


def _sale_row_get(sale_id: int) -> CacheRow | None:
    entry = cache.get(keys.sale_cache(sale_id))
    if entry is not None:
        fresh_until, row = entry
        now = redis_now()
        if now < fresh_until:
            return row
        stale = row if now < fresh_until + keys.SALE_CACHE_STALE_TTL else None
        return _sale_refresh(sale_id, stale=stale, kept=row)
    if cache.get(keys.sale_missing(sale_id)):
        return None
    return _sale_refresh(sale_id, stale=None, kept=None)


def _sale_refresh(sale_id: int, *, stale: CacheRow | None, kept: CacheRow | None) -> CacheRow | None:
    """Read the sale from PostgreSQL if this process gets the sale's cache lock; otherwise
    the `stale` copy, or (with none) the holder's entry once it is there. `kept` is what to
    serve if PostgreSQL fails."""
    deadline = time.monotonic() + SALE_CACHE_WAIT_SECONDS
    while True:
        with lock_try(keys.sale_cache_lock(sale_id), ttl=keys.SALE_CACHE_LOCK_TTL) as token:
            if token is not None:
                # The holder before us may have refreshed it between our read and our lock.
                entry = cache.get(keys.sale_cache(sale_id))
                if entry is not None and redis_now() < entry[0]:
                    return entry[1]
                return _sale_reload(sale_id, kept=kept)
            if stale is not None:
                return stale
            if time.monotonic() >= deadline:
                if kept is not None:
                    # The holder is slow: PostgreSQL may be failing over under it.
                    return kept
                # The holder is slow or gone. Only the holder releases its lock (owner
                # token), so reading without it never frees the lock for everyone else.
                return _sale_reload(sale_id, kept=kept)
        time.sleep(SALE_CACHE_POLL_SECONDS)
        entry = cache.get(keys.sale_cache(sale_id))
        if entry is not None and redis_now() < entry[0]:  # the holder's, not the kept one
            return entry[1]
        if cache.get(keys.sale_missing(sale_id)):
            return None


def _sale_reload(sale_id: int, *, kept: CacheRow | None) -> CacheRow | None:
    """_sale_load; while PostgreSQL fails, the `kept` copy (when there is one), fresh again for
    SALE_CACHE_RETRY_SECONDS so one reader per sale asks PostgreSQL that often, not every one."""
    try:
        return _sale_load(sale_id)
    except DatabaseError as error:
        if kept is None:
            raise
        logger.warning("sale %s served from its kept copy: %r", sale_id, error)
        retry = keys.SALE_CACHE_RETRY_SECONDS
        cache.set(keys.sale_cache(sale_id), (redis_now() + retry, kept), retry + keys.SALE_CACHE_KEEP_TTL)
        return kept


def units_offered(sale_ids: list[int]) -> dict[int, int]:
    """Units the merchant put up per sale (the stock audit's merchant edits and opening
    balances), for the "claimed" bar: claimed = offered - left. One query for any number."""
    reasons = [StockChange.MERCHANT_EDIT, StockChange.OPENING]
    rows = (
        StockAudit.objects.filter(sale_id__in=sale_ids, reason__in=reasons)
        .values("sale_id")
        .annotate(offered=Sum("delta"))
    )
    return {row["sale_id"]: row["offered"] for row in rows}


def claimed_percent(*, offered: int | None, left: int) -> int | None:
    """How much of the sale is gone, 0-100; None when not known (no audit rows)."""
    offered = max(offered or 0, left)
    if offered <= 0:
        return None
    return round(100 * (offered - left) / offered)


def _sale_load(sale_id: int) -> CacheRow | None:
    sale = Sale.objects.select_related("goods").filter(pk=sale_id).first()
    if sale is None:
        cache.set(keys.sale_missing(sale_id), 1, jittered(keys.SALE_MISSING_TTL))
        cache.delete(keys.sale_cache(sale_id))  # a sale deleted since: no stale copy either
        return None
    row = _sale_view(sale, stock_offered=units_offered([sale_id]).get(sale_id, 0)).cache_row()
    fresh = jittered(keys.SALE_CACHE_TTL)
    cache.set(keys.sale_cache(sale_id), (redis_now() + fresh, row), fresh + keys.SALE_CACHE_KEEP_TTL)
    return row


def sale_status(start_epoch: float, end_epoch: float, now: float | None = None) -> tuple[SaleStatus, int]:
    """Seed 000's (seckillStatus, remainSeconds) of a sale open from `start_epoch` until
    `end_epoch`: seconds to start, 0 while on, -1 once ended."""
    now = redis_now() if now is None else now  # the shop's clock, whatever this node's says
    if now < start_epoch:
        return SaleStatus.NOT_STARTED, int(start_epoch - now + 0.999)
    if now >= end_epoch:
        return SaleStatus.ENDED, -1
    return SaleStatus.ON, 0


def sale_detail(*, sale_id: int) -> SaleDetail | None:
    """Seed 000's detail data, for the item page, its JSON and the API: the status, the seconds
    to the start and the sale with the live Redis stock. None when the sale is unknown."""
    return sale_detail_public(sale_id=sale_id)[0]


def sale_detail_public(*, sale_id: int) -> tuple[SaleDetail | None, float]:
    """sale_detail, and until when (epoch seconds by the shop's clock) its status and countdown
    stay as they are: the next second `remainSeconds` ticks, the end of a running sale, never
    for an ended one (the stock may change sooner: seckill_site.http.public_answer caps it)."""
    sale = sale_get(sale_id=sale_id)
    if sale is None:
        return None, 0.0
    now = redis_now()
    status, remain = sale_status(sale.start_epoch, sale.end_epoch, now)
    if status == SaleStatus.NOT_STARTED:
        # remain = int(start - now + 0.999) holds until start - now drops below remain - 0.999.
        exact_until = min(sale.start_epoch, sale.start_epoch - remain + 0.999)
    elif status == SaleStatus.ON:
        exact_until = sale.end_epoch
    else:
        exact_until = float("inf")
    live = stock_left([sale_id])[sale_id]
    left = live if live is not None else sale.stock_count
    return SaleDetail(sale=sale, status=status, remain_seconds=remain, stock_left=left), exact_until


def sale_page(*, sale_id: int) -> SalePage | None:
    """sale_detail plus what only the item page shows: seconds to the end, the share claimed
    and a draw sale's entries."""
    detail = sale_detail(sale_id=sale_id)
    if detail is None:
        return None
    sale = detail.sale
    return SalePage(
        detail=detail,
        ends_in=max(0, int(sale.end_epoch - redis_now())) if detail.status == SaleStatus.ON else None,
        claimed=claimed_percent(offered=sale.stock_offered, left=detail.stock_left),
        entries=sale_entries(sale),
    )


def sale_public_state(*, sale_id: int) -> tuple[dict[str, Any] | None, float]:
    """What the item page refreshes, the same for every visitor and in no language: the status,
    the stock and the share claimed, the window and a draw sale's entries as epoch instants
    with the shop's clock `now` (the page counts by them however old its copy is), and until
    when (epoch seconds) the status and entries stay as they are. None for an unknown sale.
    The wire's dict: these names are the page script's."""
    detail, _until = sale_detail_public(sale_id=sale_id)
    if detail is None:
        return None, 0.0
    sale = detail.sale
    now = redis_now()
    entries = sale_entries(sale, now)
    instants = [sale.start_epoch, sale.end_epoch]
    if entries is not None and sale.entries_epoch is not None and sale.draw_epoch is not None:
        instants += [sale.entries_epoch, sale.draw_epoch]
    state = {
        "seckillStatus": int(sale_status(sale.start_epoch, sale.end_epoch, now)[0]),
        "stockCount": detail.stock_left,
        "claimed": claimed_percent(offered=sale.stock_offered, left=detail.stock_left),
        "startsAt": sale.start_epoch,
        "endsAt": sale.end_epoch,
        "now": now,
        "entries": None
        if entries is None
        else {
            "state": entries.state,
            "ahead": entries.ahead,
            "opensAt": sale.entries_epoch,
            "closesAt": sale.draw_epoch,
        },
    }
    return state, min((at for at in instants if at > now), default=float("inf"))


# A draw sale's entries as the item page shows them (SaleEntries.state).
ENTRIES_SOON = "soon"
ENTRIES_OPEN = "open"
ENTRIES_CLOSED = "closed"


def sale_entries(sale: SaleView, now: float | None = None) -> SaleEntries | None:
    """A draw sale's entries by the shop's clock: their state (soon, open, closed), when they
    open and close and the seconds to each; None for first come, first served."""
    opens, closes = sale.entries_epoch, sale.draw_epoch
    if opens is None or closes is None:
        return None
    now = redis_now() if now is None else now
    return SaleEntries(
        state=ENTRIES_SOON if now < opens else ENTRIES_OPEN if now < closes else ENTRIES_CLOSED,
        ahead=opens < sale.start_epoch,
        opens_in=max(0, int(opens - now + 0.999)),
        closes_in=max(0, int(closes - now + 0.999)),
        opens_at=datetime.fromtimestamp(opens, tz=UTC),
        closes_at=datetime.fromtimestamp(closes, tz=UTC),
    )


def stock_left(sale_ids: list[int]) -> dict[int, int | None]:
    """Live units left per sale (sales.sale_state); None where not loaded."""
    return sale_state.stock_left(sale_ids)


def sales_sold_out(*, sales: QuerySet[Sale], now) -> QuerySet[Sale]:
    """Of `sales`, those on at `now` with no unit left to buy: by the live counter the shop sells
    from (a unit some order is still being written for is gone), by the database's stock for a
    sale not loaded for selling. One Redis round trip for all the sales on now."""
    on = sales.filter(start_at__lte=now, end_at__gt=now)
    live = stock_left(list(on.values_list("pk", flat=True)))
    counted_out = [pk for pk, left in live.items() if left is not None and left <= 0]
    not_loaded = [pk for pk, left in live.items() if left is None]
    return on.filter(Q(pk__in=counted_out) | Q(pk__in=not_loaded, stock_count__lte=0))


def sale_writes_in_flight(*, sale_id: int) -> bool:
    """Units handed out by the gate whose orders are not settled yet."""
    return bool(sale_state.reservations_count([sale_id])[sale_id])


# The list's rows as PostgreSQL last gave them, for when it cannot answer (a failover): an edit
# or a new sale drops them (sales.services.goods_list_cache_drop).
LIST_ROWS_KEEP_SECONDS = 60 * 60


def sales_for_list() -> list[SaleListRow]:
    """Sales for the public list: running and upcoming first, then recently ended. While
    PostgreSQL fails, the rows it last gave, with the live stock and status all the same."""
    try:
        rows, offered = _list_rows_load()
    except DatabaseError as error:
        kept = cache.get(keys.goods_list_rows())
        if kept is None:
            raise
        logger.warning("the list rendered from its kept rows: %r", error)
        rows, offered = kept
    sales = [SaleView.from_cache_row(row) for row in rows]
    live = stock_left([sale.sale_id for sale in sales])
    now = redis_now()
    listed = []
    for sale in sales:
        left = live[sale.sale_id]
        left = left if left is not None else sale.stock_count
        status, remain = sale_status(sale.start_epoch, sale.end_epoch, now)
        claimed = claimed_percent(offered=offered.get(sale.sale_id), left=left)
        listed.append(
            SaleListRow(
                sale=sale,
                stock_left=left,
                status=status,
                remain_seconds=remain,
                claimed=claimed,
                entries=_entries_state(sale, now),
            )
        )
    listed.sort(key=_list_order)
    return listed


def _list_rows_load() -> tuple[list[CacheRow], dict[int, int]]:
    """The list's sales (ended in the last week or later) and the units each offered, kept as
    cache rows (SaleView.cache_row)."""
    recent = timezone.now() - timedelta(days=7)
    sales = Sale.objects.select_related("goods").filter(end_at__gte=recent).order_by("start_at")
    rows = [_sale_view(sale).cache_row() for sale in sales]
    offered = units_offered([sale.pk for sale in sales])
    cache.set(keys.goods_list_rows(), (rows, offered), LIST_ROWS_KEEP_SECONDS)
    return rows, offered


def _entries_state(sale: SaleView, now: float) -> str:
    """A draw sale's entries at `now`: "ahead" before they open, "open" until the draw, else ""."""
    if sale.entries_epoch is None or sale.draw_epoch is None or now >= sale.draw_epoch:
        return ""
    return "ahead" if now < sale.entries_epoch else "open"


def _list_order(row: SaleListRow) -> tuple:
    """What a shopper can buy now first (ending soonest first), then what starts next, then
    sold out, then ended (most recent first), as flash-sale shops list them."""
    if row.status == SaleStatus.ON and row.stock_left > 0:
        return (0, row.sale.end_epoch)
    if row.status == SaleStatus.NOT_STARTED:
        return (1, row.sale.start_epoch)
    if row.status == SaleStatus.ON:
        return (2, row.sale.end_epoch)
    return (3, -row.sale.end_epoch)


# --- the merchant's checks -----------------------------------------------------------------------


def sale_units_offered(*, sale: Sale, stock_count: int) -> int:
    """What a sale offers in all: the units left to sell (`stock_count`, as the merchant sets
    it) plus the units already in live orders (unpaid or paid; a cancelled order gave its unit back)."""
    if sale.pk is None:
        return stock_count
    ordered = sale.orders.exclude(status="cancelled").count()
    return stock_count + ordered


def sale_save_warnings(*, sale: Sale, stock_count: int, changed: set[str], was: Sale | None) -> list[str]:
    """What a merchant should confirm before a sale is saved, in their words; empty when
    nothing is odd. `sale` carries the new values, `was` the saved sale (None when new),
    `changed` the names of the fields the merchant changed.

    - the sale offers more units than the goods have in stock (only when the stock or the goods changed);
    - a sale that is on now gets a new price or start: shoppers have bought at the old ones."""
    warnings = []
    if sale.goods_id and (was is None or {"stock_count", "goods"} & changed):
        offered = sale_units_offered(sale=sale, stock_count=stock_count)
        if offered > sale.goods.stock:
            warnings.append(
                _(
                    "This sale offers %(offered)d units, but %(goods)s has only %(stock)d in stock. "
                    "Shoppers could buy units you cannot ship."
                )
                % {"offered": offered, "goods": sale.goods.name, "stock": sale.goods.stock}
            )
    if was is not None and was.status_at() == SaleStatus.ON:
        if "seckill_price" in changed:
            warnings.append(
                _(
                    "This sale is on now. Shoppers have already bought at ¥%(old)s; the new price ¥%(new)s "
                    "applies only to orders placed after you save."
                )
                % {"old": was.seckill_price, "new": sale.seckill_price}
            )
        if "start_at" in changed:
            warnings.append(
                _(
                    "This sale is on now. Moving its start changes when shoppers may buy: "
                    "a start in the future closes it again until then, for shoppers who are buying right now too."
                )
            )
    return warnings


def sale_delete_blockers(*, sale: Sale) -> list[str]:
    """Why a sale cannot be deleted, in the merchant's words; empty when it can
    (sales.services.sale_delete refuses the same two cases)."""
    blockers = []
    counts = Sale.objects.filter(pk=sale.pk).aggregate(
        total=Count("orders"),
        # goods cannot import orders: the statuses of orders.models.PAID_STATUSES.
        paid=Count("orders", filter=Q(orders__status__in=("paid", "shipped", "delivered"))),
        unpaid=Count("orders", filter=Q(orders__status="unpaid")),
    )
    if counts["total"]:
        blockers.append(
            ngettext(
                "It has %(n)d order (%(paid)d paid, %(unpaid)d waiting for payment). "
                "Orders keep their sale for your records and your buyers'.",
                "It has %(n)d orders (%(paid)d paid, %(unpaid)d waiting for payment). "
                "Orders keep their sale for your records and your buyers'.",
                counts["total"],
            )
            % {"n": counts["total"], "paid": counts["paid"], "unpaid": counts["unpaid"]}
        )
    if sale_writes_in_flight(sale_id=sale.pk):
        blockers.append(_("Shoppers are buying it right now: some of their orders are still being placed."))
    return blockers


def sales_visible_to(user: User) -> QuerySet[Sale]:
    """A merchant's own sale events, latest start first (a superuser's: everyone's)."""
    sales = Sale.objects.select_related("goods").order_by("-start_at", "-pk")
    return visible_to_merchant(sales, user=user, owner_path="goods__owner")


# --- figures the apps above goods add to the merchant's sale list ---------------------------------

SalesAnnotation = Callable[[QuerySet[Sale]], QuerySet[Sale]]
_sale_list_annotations: list[SalesAnnotation] = []


def sale_list_annotation_add(annotate: SalesAnnotation) -> None:
    """Have the merchant's sale list (goods' admin) pass its sales through `annotate` too.

    How an app above goods shows its own figures there without goods importing it: orders
    adds each sale's orders and revenue (orders.selectors.sales_with_order_figures) when its
    admin is loaded. Adding the same function again changes nothing.
    """
    if annotate not in _sale_list_annotations:
        _sale_list_annotations.append(annotate)


def sales_with_list_figures(sales: QuerySet[Sale]) -> QuerySet[Sale]:
    """`sales` annotated by every function given to sale_list_annotation_add."""
    for annotate in _sale_list_annotations:
        sales = annotate(sales)
    return sales
