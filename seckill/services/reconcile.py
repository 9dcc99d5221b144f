"""Loading a sale into Redis from the database, the truth for stock and orders, and squaring
the two: `stock_warm` loads a sale; `sale_reconcile` finishes reservations whose flush was lost
and reloads a sale whose Redis state drifted; `sales_reconcile` does it for every sale in play.
"""

import logging
import uuid
from dataclasses import dataclass, field

from django.db import connection, transaction
from kombu.exceptions import OperationalError as BrokerError
from redis.exceptions import RedisError

from orders.models import SeckillOrder
from sales import sale_state
from sales.models import Admission, Sale, SaleDraw
from sales.services import sale_stock_lock
from seckill.selectors import sales_to_reconcile
from seckill.services.writer import BatchDone, sale_flush
from seckill_site.publish import task_publish
from seckill_site.redis import LockNotAcquired, server_time

logger = logging.getLogger(__name__)

# The database's side of a sale in one statement, so that one snapshot serves the stock, the
# written orders and the live buyers even under READ COMMITTED.
_SNAPSHOT = """
SELECT sale.stock_count, sale.start_at, sale.end_at, sale.admission, sale.draw_window_s, sale.entries_open_at,
       ARRAY(SELECT request_id FROM {seckill_order} WHERE sale_id = sale.id AND request_id = ANY(%(request_ids)s)),
       ARRAY(SELECT user_id FROM {seckill_order} WHERE sale_id = sale.id AND live),
       EXISTS(SELECT 1 FROM {draw} WHERE sale_id = sale.id AND applied_at IS NOT NULL)
FROM {sale} AS sale WHERE sale.id = %(sale_id)s
"""


def _sale_snapshot(sale_id: int) -> sale_state.Snapshot | None:
    """The database's side of a sale. The caller holds the sale's stock lock, so no order is
    written and no unit returned between this read and its load: a reservation whose order
    committed before the lock was in the hash before it and is among `request_ids`; one made
    after cannot be written before the caller commits, so it is in flight."""
    request_ids = sale_state.reservation_ids(sale_id)
    sql = _SNAPSHOT.format(
        seckill_order=connection.ops.quote_name(SeckillOrder._meta.db_table),
        sale=connection.ops.quote_name(Sale._meta.db_table),
        draw=connection.ops.quote_name(SaleDraw._meta.db_table),
    )
    with connection.cursor() as cursor:
        cursor.execute(sql, {"request_ids": request_ids, "sale_id": sale_id})
        row = cursor.fetchone()
    if row is None:
        return None
    stock, start, end, admission, draw_window_s, entries_open_at, written, buyers, drawn = row
    draw = start.timestamp() + draw_window_s if admission == Admission.DRAW else 0
    entries = entries_open_at.timestamp() if draw and entries_open_at else 0
    return sale_state.Snapshot(
        stock, start.timestamp(), end.timestamp(), list(written), list(buyers), draw, drawn, entries
    )


@dataclass(frozen=True)
class WarmReport(sale_state.LoadReport):
    sale_id: int = 0


def _sale_compare(sale_id: int, *, apply: bool) -> WarmReport | None:
    """Compare (and with `apply`, load) a sale's Redis state with the database's, under the
    sale's stock lock from the database read until the Redis write."""
    with transaction.atomic():
        sale_stock_lock(sale_id=sale_id)
        snapshot = _sale_snapshot(sale_id)
        if snapshot is None:
            return None
        loaded = sale_state.load(sale_id=sale_id, snapshot=snapshot, apply=apply)
    return WarmReport(**vars(loaded), sale_id=sale_id)


def stock_warm(*, sale_id: int) -> WarmReport | None:
    """Load one sale's stock, buyers and window into Redis from the database.

    Units reserved in Redis whose orders are not written yet stay reserved: Redis stock is
    the database stock minus them. Returns None when the sale does not exist.
    """
    return _sale_compare(sale_id, apply=True)


def stock_warm_all() -> list[WarmReport]:
    reports = [stock_warm(sale_id=sale_id) for sale_id in Sale.objects.values_list("pk", flat=True)]
    return [report for report in reports if report is not None]


# A reservation older than this is finished by the reconciler. Order writes take
# milliseconds; two minutes means its flush was lost, or is stuck behind an outage.
RESERVATION_STALE_SECONDS = 120


@dataclass
class ReconcileReport:
    sale_id: int
    skipped: bool = False  # another reconciler holds this sale
    error: str = ""  # it failed; the others were reconciled all the same
    stale_reservations: list[str] = field(default_factory=list)
    finished: dict[str, str] = field(default_factory=dict)  # request id -> how it was settled
    before: WarmReport | None = None
    after: WarmReport | None = None

    @property
    def clean(self) -> bool:
        return not self.error and not self.stale_reservations and (self.before is None or not self.before.drifted)


def sale_reconcile(*, sale_id: int, repair: bool, stale_after: float = RESERVATION_STALE_SECONDS) -> ReconcileReport:
    """Square one sale's Redis state with the database. Idempotent; concurrent runs exclude
    each other per sale with a Redis lock (the loser reports `skipped`): a PostgreSQL session
    advisory lock would not hold behind PgBouncer in transaction mode, where consecutive
    statements of one session may run on different server connections.

    Stale reservations are flushed rather than given back: their shoppers were told "queued",
    and the writer settles each exactly once, even if their own flush is still on its way.
    """
    report = ReconcileReport(sale_id=sale_id)
    try:
        with sale_state.reconcile_lock(sale_id):
            _sale_reconcile_locked(report, repair=repair, stale_after=stale_after)
    except LockNotAcquired:
        report.skipped = True
    return report


def _sale_reconcile_locked(report: ReconcileReport, *, repair: bool, stale_after: float) -> None:
    """sale_reconcile's work; the caller holds the sale's reconcile lock."""
    sale_id = report.sale_id
    now = server_time()  # reservations are stamped by Redis's clock (reserve.lua)
    report.stale_reservations = [
        reservation.request_id
        for reservation in sale_state.reservations(sale_id)
        if now - reservation.reserved_at >= stale_after
    ]
    if repair and report.stale_reservations:

        def finished(done: BatchDone) -> None:
            report.finished.update((one.request_id, one.kind.name.lower()) for one in done.settles)

        sale_flush(
            sale_id=sale_id,
            token=f"reconcile-{uuid.uuid4().hex}",
            on_batch=finished,
            reserved_before=now - stale_after,
        )
    report.before = _sale_compare(sale_id, apply=False)
    if repair and report.before is not None and report.before.previous_stock is None:
        # Redis lost the sale: rebuild behind the queue (tasks.sale_rebuild), not from a
        # database that has not yet seen the orders of flushes still on their way.
        sale_rebuild_request(sale_id=sale_id)
    elif repair and report.before is not None and report.before.drifted:
        report.after = _sale_compare(sale_id, apply=True)


def sales_reconcile(*, repair: bool, stale_after: float = RESERVATION_STALE_SECONDS) -> list[ReconcileReport]:
    """sale_reconcile for every sale in play; a sale that fails is logged and reported with its
    error, and the rest go on."""
    reports = []
    for sale_id in sales_to_reconcile():
        try:
            reports.append(sale_reconcile(sale_id=sale_id, repair=repair, stale_after=stale_after))
        except Exception as error:  # noqa: BLE001 - one sale's failure must not stop the others
            logger.exception("reconciling sale %s failed", sale_id, extra={"sale": sale_id})
            reports.append(ReconcileReport(sale_id=sale_id, error=f"{type(error).__name__}: {error}"))
    return reports


def sale_rebuild_request(*, sale_id: int) -> None:
    """Redis lost this sale's keys: let exactly one worker rebuild them from the database.
    Until then the gate answers "busy" rather than sell from an empty or stale counter."""
    if sale_state.rebuild_claim(sale_id):
        try:
            task_publish("seckill.sale_rebuild", kwargs={"sale_id": sale_id})
        except (BrokerError, OSError, RedisError):
            logger.exception("could not queue the rebuild of sale %s", sale_id)
