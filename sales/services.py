"""Writes on sale events: the one place the admin, the API and the tasks go through."""

import logging
from datetime import timedelta
from typing import Any

from django.conf import settings
from django.core.cache import cache
from django.core.exceptions import ValidationError
from django.db import connection, transaction
from django.db.models import F
from django.utils import timezone
from django.utils.translation import gettext as _

from goods.services import GoodsInUse
from sales import cache_keys as keys
from sales import draw_seed, sale_state
from sales.models import Admission, Sale, SaleDraw, StockAudit, StockAuditDetail, StockChange
from sales.selectors import sale_writes_in_flight
from seckill_site.edge import edge_purge
from seckill_site.http import INT32_MAX
from seckill_site.publish import task_publish
from seckill_site.shared import SALES_KEY, sale_key
from users.models import User

logger = logging.getLogger(__name__)


class StockShortage(Exception):
    """Fewer units are left than the edit removes, or more would be than the column holds;
    nothing was changed. The message is for the merchant."""


class SaleInUse(GoodsInUse):
    """The sale has orders, or units handed out whose orders are not written yet; nothing was
    deleted. The message is for the merchant."""


def stock_audit_record(
    *,
    sale_id: int,
    delta: int,
    reason: StockChange,
    actor_id: int | None = None,
    reference: str = "",
    detail: StockAuditDetail | None = None,
) -> None:
    """Log one change of a sale's stock, with the figures behind it in `detail` (never words).

    The caller changes the stock in the same transaction, so the log and the stock commit (or
    roll back) together. One INSERT: the order writer calls it for every order.
    """
    StockAudit.objects.create(
        sale_id=sale_id, delta=delta, reason=reason, actor_id=actor_id, reference=reference, detail=detail or {}
    )


# The sale's stock lock (pg_advisory_xact_lock: released at commit or rollback, so it holds
# behind PgBouncer in transaction mode too): the first statement of every transaction that
# writes a sale's orders (both order writers) or returns a unit (cancellation, expiry), and
# held by the reconciler from its database read until its Redis write (seckill.services).
# Two flushes of one sale take turns instead of both writing and one rolling back, and no
# order lands or unit returns between what the reconciler read and what it writes.
SALE_STOCK_LOCK_CLASS = 0x5EC1  # the advisory lock's first key: this lock's namespace


def sale_stock_lock(*, sale_id: int) -> None:
    """Take the sale's stock lock for the rest of the current transaction."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_advisory_xact_lock(%s, %s)", [SALE_STOCK_LOCK_CLASS, sale_id])


def goods_list_cache_drop() -> None:
    """The list changed: drop its cached HTML here and at the edge. Called once committed."""
    cache.delete_many([keys.goods_list_rows(), *(keys.goods_list_html(code) for code, _code in settings.LANGUAGES)])
    edge_purge(SALES_KEY)


def sale_cache_drop(*, sale_id: int) -> None:
    """The sale changed: drop its cached data here and its pages at the edge. Called once committed."""
    cache.delete_many([keys.sale_cache(sale_id), keys.sale_missing(sale_id), keys.draw_summary(sale_id)])
    edge_purge(sale_key(sale_id))


def sale_pages_drop(*, sale_id: int) -> None:
    """A sale event changed (an edit, its opening, its sell-out, a unit back, its draw): drop its
    cached pages (its item data and the list), here and at the edge. Called once committed."""
    sale_cache_drop(sale_id=sale_id)
    goods_list_cache_drop()


def sale_open(*, sale_id: int) -> None:
    """Load a sale event into Redis (stock and window) unless it is there already, and drop
    the cached pages. sale_create calls it once committed; tools that create sales with the
    ORM call it themselves. The row is read under the sale's stock lock, so an edit committed
    before this load is in it, and one committed after finds the sale loaded."""
    with transaction.atomic():
        sale_stock_lock(sale_id=sale_id)
        sale = Sale.objects.filter(pk=sale_id).first()
        if sale is not None:
            sale_state.sale_open(
                sale_id=sale_id,
                stock=sale.stock_count,
                start=sale.start_at.timestamp(),
                end=sale.end_at.timestamp(),
                draw=_draw_second(sale),
                entries=_entries_second(sale),
            )
    if sale is not None and sale.draw_at is not None:
        draw_schedule(sale=sale)
    sale_pages_drop(sale_id=sale_id)


def _draw_second(sale: Sale) -> float:
    """The epoch second of the sale's draw as Redis holds it: 0 for first come, first served."""
    return sale.draw_at.timestamp() if sale.draw_at is not None else 0


def _entries_second(sale: Sale) -> float:
    """The epoch second a draw sale's entries open as Redis holds it: 0 for a sale whose entries
    open at its start (or first come, first served)."""
    return sale.entries_open_at.timestamp() if sale.entries_from and sale.entries_open_at else 0


def draw_seed_ensure(*, sale: Sale) -> None:
    """A draw sale's secret seed, made once when the sale is set to draw (its SHA-256 is public
    from now on); an undrawn seed of a sale set back to first come, first served goes."""
    if sale.admission == Admission.DRAW:
        commitment = draw_seed.seed_commit()
        SaleDraw.objects.get_or_create(
            sale=sale, defaults={"seed_nonce": commitment.nonce, "seed_sha256": commitment.sha256}
        )
    else:
        SaleDraw.objects.filter(sale=sale, drawn_at__isnull=True).delete()


# A draw further ahead than this gets no ETA message: a worker holds an ETA message in memory
# until it is due, and a Redis broker redelivers one unacknowledged for longer than its
# visibility timeout (an hour by default). Beat's sweep (every few seconds) draws those.
DRAW_ETA_AHEAD = timedelta(hours=1)


def draw_schedule(*, sale: Sale) -> None:
    """Have a worker make the sale's draw when its entry window ends (seckill.sale_draw). Beat's
    sweep and the first buy after the window draw it too when this message is lost or late."""
    if sale.draw_at is None or sale.draw_at - timezone.now() > DRAW_ETA_AHEAD:
        return
    try:
        task_publish("seckill.sale_draw", kwargs={"sale_id": sale.pk}, eta=sale.draw_at)
    except Exception:  # the sweep draws it  # noqa: BLE001
        logger.exception("scheduling the draw of sale %s failed", sale.pk)


def sale_create(*, sale: Sale, actor: User | None = None) -> Sale:
    """Put a new sale event on (validated); it is loaded into Redis once committed (sale_open)."""
    with transaction.atomic():
        sale.full_clean()
        refusal = sale_create_refusal(sale=sale)
        if refusal:
            raise ValidationError(refusal)
        sale.save()
        draw_seed_ensure(sale=sale)
        stock_audit_record(
            sale_id=sale.pk,
            delta=sale.stock_count,
            reason=StockChange.MERCHANT_EDIT,
            actor_id=actor.pk if actor else None,
            detail={"created": True},
        )
        sale_id = sale.pk
        transaction.on_commit(lambda: sale_open(sale_id=sale_id))
    return sale


def sale_update(*, sale: Sale, changes: dict[str, Any], stock_delta: int = 0, actor: User | None = None) -> Sale:
    """Edit a sale event: the fields in `changes`, and its stock by a difference.

    The stock is never written as an absolute value: order writes decrement it all through a
    sale, and a form or API client holding an older count would undo them (overselling).
    Only the changed fields are saved. Under the sale's stock lock, `stock_delta` removes units
    from Redis first and then from the database, refused with StockShortage (changing nothing)
    when fewer units than that are free in either: units handed out to shoppers cannot be taken
    back. Added units reach Redis once committed. `sale` is refreshed with the stock it ends with.
    """
    if "stock_count" in changes:
        raise ValueError("stock changes are differences: pass stock_delta")
    taken = None
    try:
        with transaction.atomic():
            sale_stock_lock(sale_id=sale.pk)
            # The rules below judge the sale as it is now, not as the caller read it.
            sale.refresh_from_db()
            changes = {field: value for field, value in changes.items() if value != getattr(sale, field)}
            refusal = sale_edit_refusal(sale=sale, changes=changes)
            if refusal:
                raise ValidationError(refusal)
            admission_changed = bool({"admission", "draw_window_s", "entries_open_at"} & set(changes))
            for field, value in changes.items():
                setattr(sale, field, value)
            sale.full_clean(exclude=["stock_count"])
            if changes:
                sale.save(update_fields=list(changes))
            if stock_delta < 0:
                if SaleDraw.objects.filter(sale=sale, drawn_at__isnull=False, applied_at__isnull=True).exists():
                    # Its winners were counted against these units and are being given them.
                    raise StockShortage(_("The sale's draw is being applied; remove units once it is done."))
                taken = _stock_take(sale=sale, count=-stock_delta)
            if stock_delta:
                _stock_change(sale=sale, delta=stock_delta, actor=actor)
            if admission_changed:
                draw_seed_ensure(sale=sale)
            sale_id = sale.pk
            window_changed = admission_changed or bool({"start_at", "end_at"} & set(changes))
            transaction.on_commit(lambda: _sale_edited(sale_id=sale_id, window_changed=window_changed))
    except BaseException:
        if taken is not None and taken.taken:
            # Rolled back: the units go back to Redis (unless a load since counted them).
            sale_state.stock_add(sale_id=sale.pk, count=-stock_delta, ticket=taken.ticket)
        raise
    sale.refresh_from_db(fields=["stock_count"])
    return sale


def sale_edit_refusal(*, sale: Sale, changes: dict[str, Any]) -> dict[str, str]:
    """Why these changes of `sale` (as stored) are refused, by field; empty when they are not.
    A sale keeps its admission once it has started or taken entries; a draw sale's entry window,
    which the draw's second follows and shoppers were shown, can neither move once it has opened
    nor open in the past, and neither can the opening of entries taken ahead (entries_open_at).
    One rule for the admin's form and for sale_update, which asks it again under the lock."""
    now = timezone.now()
    started = sale.start_at <= now
    entries_opened = sale.entries_from is not None and sale.entries_from <= now
    refusal = {}
    if started and {"admission", "draw_window_s"} & set(changes):
        refusal["admission"] = _("A sale's admission cannot change once it has started.")
    elif entries_opened and {"admission", "draw_window_s"} & set(changes):
        refusal["admission"] = _("A draw sale's admission cannot change once it has taken entries.")
    start_at = changes.get("start_at")
    if start_at is not None and changes.get("admission", sale.admission) == Admission.DRAW:
        if started or entries_opened:
            refusal["start_at"] = _("A draw sale's start cannot move once its entry window has opened.")
        elif start_at <= now:
            refusal["start_at"] = _("A draw sale cannot start in the past: its entry window would be cut short.")
    if "entries_open_at" in changes:
        entries_open_at = changes["entries_open_at"]
        if entries_opened:
            refusal["entries_open_at"] = _("Entries have opened already: their opening cannot change.")
        elif entries_open_at is not None and entries_open_at <= now:
            refusal["entries_open_at"] = _("Entries cannot open in the past.")
    return refusal


def sale_create_refusal(*, sale: Sale) -> dict[str, str]:
    """Why a new sale is refused beyond the model's rules, by field: entries that would open in
    the past (shoppers could never have been told when). The admin's form asks it too."""
    if sale.entries_open_at is not None and sale.entries_open_at <= timezone.now():
        return {"entries_open_at": _("Entries cannot open in the past.")}
    return {}


def _stock_take(*, sale: Sale, count: int) -> sale_state.StockTake:
    """Take `count` units nobody holds out of Redis (the caller holds the sale's stock lock)."""
    taken = sale_state.stock_take(sale_id=sale.pk, count=count)
    if taken.taken is False:  # the rest are held by shoppers whose orders are on their way
        raise StockShortage(_("Not enough units left to remove %(n)s; nothing changed.") % {"n": count})
    return taken


def _stock_change(*, sale: Sale, delta: int, actor: User | None) -> None:
    """The database's side of a stock edit (the caller holds the sale's stock lock); added
    units reach Redis once committed, with the ticket read here."""
    rows = Sale.objects.filter(pk=sale.pk)
    if delta < 0:
        rows = rows.filter(stock_count__gte=-delta)
        shortage = _("Not enough units left to remove %(n)s; nothing changed.") % {"n": -delta}
    else:
        # The column is a 32-bit integer: a sum past it would overflow in PostgreSQL (a 500).
        rows = rows.filter(stock_count__lte=INT32_MAX - min(delta, INT32_MAX))
        shortage = _("The stock cannot exceed %(max)s units; nothing changed.") % {"max": INT32_MAX}
    if abs(delta) > INT32_MAX or not rows.update(stock_count=F("stock_count") + delta):
        raise StockShortage(shortage)
    stock_audit_record(
        sale_id=sale.pk, delta=delta, reason=StockChange.MERCHANT_EDIT, actor_id=actor.pk if actor else None
    )
    if delta > 0:
        sale_id, ticket = sale.pk, sale_state.ticket(sale.pk)
        transaction.on_commit(lambda: sale_state.stock_add(sale_id=sale_id, count=delta, ticket=ticket))


def _sale_edited(*, sale_id: int, window_changed: bool) -> None:
    """After an edit's commit: a new window to Redis (from the row as committed now, so edits
    whose commits run out of order still end on the last one), and the pages dropped."""
    if window_changed:
        row = Sale.objects.filter(pk=sale_id).first()
        if row is not None:
            sale_state.window_set(
                sale_id=sale_id,
                start=row.start_at.timestamp(),
                end=row.end_at.timestamp(),
                draw=_draw_second(row),
                entries=_entries_second(row),
            )
            if row.draw_at is not None:
                draw_schedule(sale=row)
    sale_pages_drop(sale_id=sale_id)


def sale_delete(*, sale: Sale) -> None:
    """Delete a sale event with everything it left in Redis and the page caches.

    Refused (SaleInUse) while it has orders (they keep their sale) or units reserved whose
    orders are still being written: deleting then would strand a shopper told "queued".
    """
    sale_id = sale.pk
    if sale_writes_in_flight(sale_id=sale_id):
        raise SaleInUse(_("Orders of this sale are still being written; try again in a minute."))
    if sale.orders.exists():
        raise SaleInUse(_("This sale has orders; it cannot be deleted."))
    with transaction.atomic():
        sale.delete()

        def cleanup() -> None:
            sale_state.sale_forget(sale_id=sale_id)
            sale_pages_drop(sale_id=sale_id)

        transaction.on_commit(cleanup)
