"""The seckill pipeline: captcha, one-time path, the gate, and the order writer's Redis half.

The gate (`seckill_attempt`) is the hottest code in the shop. It never queries PostgreSQL
and makes at most one Redis round trip per layer, cheapest layer first (seeds 000, 001).
"""

import logging
import secrets
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import timedelta

from django.conf import settings
from django.db import connection, transaction
from django.utils import timezone
from kombu.exceptions import OperationalError as BrokerError
from redis.exceptions import RedisError

from goods.models import SeckillGoods
from goods.services import sale_stock_lock
from orders.models import SeckillOrder
from orders.services import WriteOutcome, order_create_from_seckill
from seckill import captcha
from seckill_site.codes import Code
from seckill_site.logs import request_id_var
from seckill_site.redis import LockNotAcquired, client, keys, lock, script, server_time
from seckill_site.redis import now as redis_now

logger = logging.getLogger(__name__)

# Per-process sold-out marks: sale id -> monotonic time until which the sale counts as sold
# out here. A mark lasts one second, so when stock comes back (a cancellation, a warm) every
# process sees it within a second, and a sold-out sale costs each process at most one Redis
# call per second instead of one per request.
SOLD_OUT_MARK_SECONDS = 1.0
_sold_out_until: dict[int, float] = {}

# Per-process cache of sale windows read from Redis: sale id -> (start, end, fetched at).
SALE_WINDOW_SECONDS = 5.0
_windows: dict[int, tuple[float, float, float]] = {}

# Publishing to the broker must fail fast so the unit can be given back while the user waits.
PUBLISH_RETRY_POLICY = {"max_retries": 2, "interval_start": 0, "interval_step": 0.2, "interval_max": 0.5}


@dataclass(frozen=True)
class Attempt:
    code: Code
    request_id: str | None = None
    retry_after: int = 0  # seconds, with TOO_MANY_REQUESTS


# --- captcha and path ----------------------------------------------------------------------


class SaleLimitReached(Exception):
    """A shopper drew too many captchas or tried too many answers for one sale this minute."""

    def __init__(self, *, action: str, limit: int, retry_after: int) -> None:
        super().__init__(f"{action}: more than {limit} per minute")
        self.action = action
        self.limit = limit
        self.retry_after = retry_after


# action -> the setting that holds its per-minute limit
SALE_LIMITS = {"captcha": "SECKILL_CAPTCHAS_PER_MINUTE", "path": "SECKILL_PATHS_PER_MINUTE"}


def sale_limit_take(*, sale_id: int, user_id: int, action: str) -> None:
    """Count one `action` of this shopper on this sale; raise SaleLimitReached over the limit.

    The per-request rate limits stop floods; this stops a script that paces itself from
    drawing captchas all through a sale until its OCR gets one right. Redis holds the count,
    so every web node shares it, and refusals are tallied for the merchant's live view."""
    limit = getattr(settings, SALE_LIMITS[action])
    retry_after = script("sale_limit")(
        keys=[keys.sale_limit(sale_id, action, user_id), keys.sale_refused(sale_id)],
        args=[limit, keys.SALE_LIMIT_WINDOW, action, keys.SALE_REFUSED_TTL],
    )
    if retry_after:
        raise SaleLimitReached(action=action, limit=limit, retry_after=int(retry_after))


def captcha_create(*, user_id: int, sale_id: int) -> bytes:
    """Draw a new captcha for this user and sale; its answer replaces any earlier one.
    Raises SaleLimitReached past SECKILL_CAPTCHAS_PER_MINUTE for this sale."""
    sale_limit_take(sale_id=sale_id, user_id=user_id, action="captcha")
    expression = captcha.expression_new()
    client().set(keys.captcha(sale_id, user_id), captcha.expression_value(expression), ex=keys.CAPTCHA_TTL)
    return captcha.image_png(expression)


def captcha_audio_create(*, user_id: int, sale_id: int) -> bytes:
    """The spoken alternative to the picture (a WAV of digits to type): its answer replaces
    any earlier captcha's, and it counts against the same per-sale captcha limit."""
    sale_limit_take(sale_id=sale_id, user_id=user_id, action="captcha")
    digits = captcha.audio_answer_new()
    client().set(keys.captcha(sale_id, user_id), int(digits), ex=keys.CAPTCHA_TTL)
    return captcha.audio_wav(digits)


def path_create(*, user_id: int, sale_id: int, answer: int) -> str | None:
    """Exchange a right captcha answer for a one-time path. The answer is single-use: any
    attempt, right or wrong, consumes it, so answers cannot be guessed in a loop. Raises
    SaleLimitReached past SECKILL_PATHS_PER_MINUTE tries for this sale (the captcha is then
    left alone)."""
    sale_limit_take(sale_id=sale_id, user_id=user_id, action="path")
    expected = client().getdel(keys.captcha(sale_id, user_id))
    if expected is None or int(expected) != answer:
        return None
    path = secrets.token_hex(16)
    client().set(keys.path(sale_id, user_id), path, ex=keys.PATH_TTL)
    return path


# --- the gate --------------------------------------------------------------------------------


def _sale_window(sale_id: int) -> tuple[float, float] | None:
    """The sale window from this process's cache of Redis (refreshed every few seconds);
    None when Redis does not hold it (unknown sale, or Redis lost it)."""
    cached = _windows.get(sale_id)
    now = time.monotonic()
    if cached is not None and now - cached[2] < SALE_WINDOW_SECONDS:
        return cached[0], cached[1]
    start, end = client().hmget(keys.window(sale_id), ["start", "end"])
    if start is None or end is None:
        _windows.pop(sale_id, None)
        return None
    _windows[sale_id] = (float(start), float(end), now)
    return float(start), float(end)


def sold_out_known(sale_id: int) -> bool:
    """Does this process already know the sale is sold out (no network call)?"""
    return _sold_out_until.get(sale_id, 0.0) > time.monotonic()


def sold_out_mark(sale_id: int) -> None:
    _sold_out_until[sale_id] = time.monotonic() + SOLD_OUT_MARK_SECONDS


def sold_out_clear(sale_id: int | None = None) -> None:
    if sale_id is None:
        _sold_out_until.clear()
    else:
        _sold_out_until.pop(sale_id, None)


def _sale_keys(sale_id: int, user_id: int) -> list[str]:
    return [keys.stock(sale_id), keys.buyers(sale_id), keys.reservations(sale_id), keys.result(sale_id, user_id)]


@dataclass(frozen=True)
class Reservation:
    left: int  # units left after this one (>= 0), or a refusal (_RESERVE_REFUSALS)
    flush_due: bool = False  # the batch writer has no flush pending: this buy publishes one
    retry_after: int = 0  # over the rate limit (left == -7): seconds until it lets one through


def _batch_writer() -> bool:
    return settings.SECKILL_ORDER_WRITER == "batch"


def reserve(*, sale_id: int, user_id: int, path: str, request_id: str) -> Reservation:
    """reserve.lua: count the buy against the rate limit, take one unit, and with the batch
    writer say whether a flush is due."""
    left, extra = script("reserve")(
        keys=[
            *_sale_keys(sale_id, user_id),
            keys.path(sale_id, user_id),
            keys.window(sale_id),
            keys.flush_pending(sale_id),
            keys.gate_rate(sale_id, user_id),
        ],
        args=[
            user_id,
            request_id,
            keys.RESULT_TTL,
            path,
            settings.SECKILL_WRITER_FLUSH_MARK_MS if _batch_writer() else 0,
            request_id_var.get() or "",  # the HTTP request's id, for the order writer's log line
            keys.GATE_RATE_COUNT,
            keys.GATE_RATE_SECONDS,
        ],
    )
    if left == RATE_LIMITED:
        return Reservation(left, retry_after=max(1, int(extra)))
    return Reservation(left, flush_due=left >= 0 and bool(extra))


RATE_LIMITED = -7
# What reserve.lua's negative answers mean.
_RESERVE_REFUSALS = {
    -1: Code.ALREADY_BOUGHT,
    -2: Code.SOLD_OUT,
    -3: Code.SERVER_BUSY,
    -4: Code.PATH_INVALID,
    -5: Code.NOT_STARTED,
    -6: Code.ENDED,
    RATE_LIMITED: Code.TOO_MANY_REQUESTS,
}


def seckill_attempt(*, user_id: int, sale_id: int, path: str) -> Attempt:
    """Try to take one unit of a sale for a user. The caller checked the login (the session
    or token, layer 1).

    Cheapest layer first: the answers this process knows without asking anybody come before
    the rate limit and the path, so a sold-out sale costs no network call at all. They are
    public facts (the list page shows them), so answering them to anyone leaks nothing, and a
    shopper's unused path survives a "sold out" that a cancellation may soon undo. Everything
    else is one Redis call: reserve.lua counts the rate limit (keys.GATE_RATE_COUNT buys per
    keys.GATE_RATE_SECONDS per shopper and sale, page and API alike), takes the path and the
    unit. With the session's own read, an accepted buy costs two Redis round trips (the
    session lives under its user's hash tag, the sale's keys under the sale's: on a cluster
    they are different slots, so no one call can hold both).
    """
    # Layer 2: this process already knows the sale is not on: no network call.
    if sold_out_known(sale_id):  # seckill.middleware answers most of these even earlier
        return Attempt(Code.SOLD_OUT)
    now = redis_now()  # the shop's clock (Redis's), not this node's
    window = _sale_window(sale_id)  # one Redis read per sale every few seconds
    if window is not None and now < window[0]:
        return Attempt(Code.NOT_STARTED)
    if window is not None and now >= window[1]:
        return Attempt(Code.ENDED)

    # Layers 3 and 4: one Lua script has the last word on the window and the stock, counts
    # the rate limit, then takes the one-time path, checks "already bought" and hands out the unit.
    request_id = uuid.uuid4().hex
    reservation = reserve(sale_id=sale_id, user_id=user_id, path=path, request_id=request_id)
    left = reservation.left
    if left < 0:
        if left == -2:
            sold_out_mark(sale_id)
        elif left == -3:
            sale_rebuild_request(sale_id=sale_id)
        return Attempt(_RESERVE_REFUSALS[left], retry_after=reservation.retry_after)
    if left == 0:
        sold_out_mark(sale_id)

    # Layer 5: queue the database write; if the broker refuses, give the unit back.
    try:
        _order_write_queue(sale_id=sale_id, user_id=user_id, request_id=request_id, flush_due=reservation.flush_due)
    except (BrokerError, OSError, RedisError):
        logger.exception("queueing the order write failed; releasing the reservation %s", request_id)
        reservation_release(sale_id=sale_id, user_id=user_id, request_id=request_id, result="", return_unit=True)
        if reservation.flush_due:
            # The next buy publishes the flush instead (reservations made meanwhile wait for
            # it, or for the reconciler if none comes).
            client().delete(keys.flush_pending(sale_id))
        return Attempt(Code.TRY_AGAIN)
    return Attempt(Code.SUCCESS, request_id)


def _order_write_queue(*, sale_id: int, user_id: int, request_id: str, flush_due: bool) -> None:
    """Publish what turns this reservation into its order. The batch writer: the sale's flush
    message, when reserve.lua says none is pending (most buys publish nothing: the pending
    flush drains their reservations too). The per-request writer: one message per buy."""
    from seckill.tasks import order_flush, order_write

    if not _batch_writer():
        order_write.apply_async(
            kwargs={"sale_id": sale_id, "user_id": user_id, "request_id": request_id},
            retry=True,
            retry_policy=PUBLISH_RETRY_POLICY,
        )
    elif flush_due:
        order_flush.apply_async(kwargs={"sale_id": sale_id}, retry=True, retry_policy=PUBLISH_RETRY_POLICY)


def reservation_release(*, sale_id: int, user_id: int, request_id: str, result: str, return_unit: bool) -> bool:
    """Undo a reservation (idempotent). `result` is what /seckill/result answers next ('' for nothing)."""
    released = script("unreserve")(
        keys=[*_sale_keys(sale_id, user_id), keys.released(sale_id, request_id)],
        args=[user_id, request_id, result, keys.RESULT_TTL, "1" if return_unit else "0"],
    )
    if released and return_unit:
        sold_out_clear(sale_id)
    return bool(released)


# --- the order writer ------------------------------------------------------------------------


def _given_back(sale_id: int, request_id: str) -> bool:
    """Did the gate give this reservation's unit back? A publish can fail after the broker
    took the message (the connection dropped before the reply); the shopper was told "try
    again", so that message must write nothing. If Redis cannot say, write: the database
    guards remain, and the order is never held back for want of Redis."""
    try:
        return bool(client().exists(keys.released(sale_id, request_id)))
    except RedisError:
        return False


def seckill_order_write(*, sale_id: int, user_id: int, request_id: str) -> WriteOutcome:
    """Turn a reservation into its order (called by the Celery task; safe to run twice)."""
    if _given_back(sale_id, request_id):
        return WriteOutcome.GIVEN_BACK
    written = order_create_from_seckill(sale_id=sale_id, user_id=user_id, request_id=request_id)
    if written.outcome in (WriteOutcome.CREATED, WriteOutcome.ALREADY_WRITTEN):
        script("finish")(
            keys=[keys.reservations(sale_id), keys.result(sale_id, user_id)],
            args=[request_id, written.order_id, keys.RESULT_TTL],
        )
    elif written.outcome is WriteOutcome.DUPLICATE:
        # The user already holds a live order (Redis had lost its buyer set): this unit was
        # never taken from the database, so it goes back to the Redis stock; the user stays a buyer.
        reservation_release(sale_id=sale_id, user_id=user_id, request_id=request_id, result="", return_unit=True)
        client().sadd(keys.buyers(sale_id), user_id)
        client().set(keys.result(sale_id, user_id), written.order_id, ex=keys.RESULT_TTL)
    else:
        # The database has no unit although Redis handed one out: Redis ran ahead of the
        # database (e.g. a manual stock edit). The user is told it failed and may not keep a
        # place in the buyer set; the stock counter is not given the unit back. The reconciler
        # squares Redis with the database.
        reservation_release(sale_id=sale_id, user_id=user_id, request_id=request_id, result="-1", return_unit=False)
    return written.outcome


@dataclass(frozen=True)
class BatchDone:
    reservations: dict[str, int]  # request id -> user id: the batch
    created: dict[str, int]  # request id -> order id: the orders it created in one transaction
    seconds: float
    traces: dict[str, str]  # request id -> the id of the HTTP request that bought it ("" if unknown)


@dataclass
class FlushReport:
    batches: int = 0
    created: int = 0
    # outcome -> count, of the batches the database refused as a whole (a redelivered flush's
    # orders are found here: "already written")
    one_by_one: dict[str, int] = field(default_factory=dict)


def _reservations_batch(sale_id: int, size: int) -> dict[str, tuple[int, str]]:
    """Up to `size` of the sale's reservations, request id -> (user id, trace). HSCAN, not
    HGETALL: a 20,000-unit sale whose writer runs behind must not ship its whole hash for
    every batch."""
    batch: dict[str, tuple[int, str]] = {}
    cursor = 0
    while True:
        cursor, found = client().hscan(keys.reservations(sale_id), cursor, count=size)
        for request_id, value in found.items():
            user_id, _reserved_at, trace = keys.reservation_parse(value)
            batch[request_id.decode()] = (user_id, trace)
        if cursor == 0 or len(batch) >= size:
            return dict(list(batch.items())[:size])


def _batch_finish(sale_id: int, written: dict[str, int], users: dict[str, int]) -> int:
    """finish_batch.lua: record the written orders' answers; the reservations left."""
    return script("finish_batch")(
        keys=[
            keys.reservations(sale_id),
            keys.flush_pending(sale_id),
            *(keys.result(sale_id, users[request_id]) for request_id in written),
        ],
        args=[
            keys.RESULT_TTL,
            settings.SECKILL_WRITER_FLUSH_MARK_MS,
            *(value for pair in written.items() for value in pair),
        ],
    )


def sale_flush(*, sale_id: int, on_batch: Callable[[BatchDone], None] | None = None) -> FlushReport:
    """Turn the sale's reservations into orders, a batch per transaction, until none are left
    (called by the flush task; safe to run twice, and concurrently: the database writes each
    order once, and two flushes of one sale take turns on its writer lock).

    A batch the database refuses as a whole is written one reservation at a time, exactly as
    the per-request writer does, so the database has the last word on each. `on_batch` is
    told of every batch (metrics and logs)."""
    from orders.services import orders_create_from_seckill_batch

    report = FlushReport()
    size = settings.SECKILL_WRITER_BATCH_SIZE
    while True:
        found = _reservations_batch(sale_id, size)
        batch = {request_id: user_id for request_id, (user_id, _trace) in found.items()}
        created: dict[str, int] = {}  # request id -> order id, written by this batch's one transaction
        if batch:
            started = time.perf_counter()
            result = orders_create_from_seckill_batch(sale_id=sale_id, reservations=batch)
            if result is None:
                # one_by_one's writes record their own answers in Redis (finish.lua, unreserve.lua)
                for request_id, user_id in batch.items():
                    outcome = seckill_order_write(sale_id=sale_id, user_id=user_id, request_id=request_id)
                    report.one_by_one[outcome.value] = report.one_by_one.get(outcome.value, 0) + 1
            else:
                created = result
                report.created += len(created)
            report.batches += 1
            if on_batch is not None:
                traces = {request_id: trace for request_id, (_user_id, trace) in found.items()}
                on_batch(BatchDone(batch, created, time.perf_counter() - started, traces))
        if not _batch_finish(sale_id, created, batch):
            return report


def flushes_lapsed_publish() -> list[int]:
    """Publish a flush for every live sale that holds reservations but no flush mark (Celery
    beat, every SECKILL_WRITER_SWEEP_SECONDS); the sale ids.

    A flush message can be lost after its mark was set: the web process died between the
    reserve script and the publish, or the broker lost it. The mark lapses, but only a later
    buy would publish again, and a sold-out sale has none. Without this sweep its reservations
    would wait for the reconciler, minutes later."""
    from seckill.tasks import order_flush

    sale_ids = sales_to_reconcile()
    pipeline = client().pipeline(transaction=False)
    for sale_id in sale_ids:
        pipeline.hlen(keys.reservations(sale_id))
    waiting = [sale_id for sale_id, count in zip(sale_ids, pipeline.execute(), strict=True) if count]
    published = []
    for sale_id in waiting:
        if client().set(keys.flush_pending(sale_id), 1, nx=True, px=settings.SECKILL_WRITER_FLUSH_MARK_MS):
            order_flush.apply_async(kwargs={"sale_id": sale_id}, retry=True, retry_policy=PUBLISH_RETRY_POLICY)
            published.append(sale_id)
    return published


# --- loading Redis from the database, and reconciling the two ------------------------------------


@dataclass(frozen=True)
class WarmReport:
    sale_id: int
    previous_stock: int | None
    stock: int
    buyers: int
    previous_buyers: int = 0
    buyers_differ: bool = False

    @property
    def drifted(self) -> bool:
        return self.previous_stock != self.stock or self.buyers_differ


@dataclass(frozen=True)
class _Snapshot:
    stock: int
    start: float
    end: float
    written_request_ids: list[str]
    live_buyer_ids: list[int]


# The database's side of a sale in one statement, so that one snapshot serves the stock, the
# written orders and the live buyers even under READ COMMITTED.
_SNAPSHOT = """
SELECT sale.stock_count, sale.start_at, sale.end_at,
       ARRAY(SELECT request_id FROM {seckill_order} WHERE sale_id = sale.id AND request_id = ANY(%(request_ids)s)),
       ARRAY(SELECT user_id FROM {seckill_order} WHERE sale_id = sale.id AND live)
FROM {sale} AS sale WHERE sale.id = %(sale_id)s
"""


def _sale_snapshot(sale_id: int) -> _Snapshot | None:
    """The database's side of a sale. The caller holds the sale's stock lock, so no order is
    written and no unit returned between this read and its warm.lua call: a reservation whose
    order committed before the lock was in the hash before it and is among `request_ids`; one
    made after cannot be written before the caller commits, so it is in flight."""
    request_ids = [rid.decode() for rid in client().hkeys(keys.reservations(sale_id))]
    sql = _SNAPSHOT.format(
        seckill_order=connection.ops.quote_name(SeckillOrder._meta.db_table),
        sale=connection.ops.quote_name(SeckillGoods._meta.db_table),
    )
    with connection.cursor() as cursor:
        cursor.execute(sql, {"request_ids": request_ids, "sale_id": sale_id})
        row = cursor.fetchone()
    if row is None:
        return None
    stock, start, end, written, buyers = row
    return _Snapshot(stock, start.timestamp(), end.timestamp(), list(written), list(buyers))


def _sale_compare(sale_id: int, *, apply: bool) -> WarmReport | None:
    """Compare (and with `apply`, load) a sale's Redis state with the database's, under the
    sale's stock lock from the database read until the Redis write (goods.services)."""
    with transaction.atomic():
        sale_stock_lock(sale_id=sale_id)
        snapshot = _sale_snapshot(sale_id)
        if snapshot is None:
            return None
        previous, stock, buyers_before, buyers, differ = script("warm")(
            keys=[keys.stock(sale_id), keys.buyers(sale_id), keys.reservations(sale_id), keys.window(sale_id)],
            args=[
                snapshot.stock,
                snapshot.start,
                snapshot.end,
                "apply" if apply else "check",
                len(snapshot.written_request_ids),
                *snapshot.written_request_ids,
                *snapshot.live_buyer_ids,
            ],
        )
    if apply:
        _windows.pop(sale_id, None)
        sold_out_clear(sale_id)
    return WarmReport(sale_id, None if previous == -1 else previous, stock, buyers, buyers_before, bool(differ))


def stock_warm(*, sale_id: int) -> WarmReport | None:
    """Load one sale's stock, buyers and window into Redis from the database.

    Units reserved in Redis whose orders are not written yet stay reserved: Redis stock is
    the database stock minus them. Returns None when the sale does not exist.
    """
    return _sale_compare(sale_id, apply=True)


def stock_warm_all() -> list[WarmReport]:
    reports = [stock_warm(sale_id=sale_id) for sale_id in SeckillGoods.objects.values_list("pk", flat=True)]
    return [report for report in reports if report is not None]


# A reservation older than this is finished by the reconciler. Order writes take
# milliseconds; two minutes means its message was lost, or is stuck behind an outage.
RESERVATION_STALE_SECONDS = 120
# Sales that ended longer ago than this are left alone by the periodic reconciler.
RECONCILE_ENDED_WITHIN = timedelta(days=1)


@dataclass
class ReconcileReport:
    sale_id: int
    skipped: bool = False  # another reconciler holds this sale
    stale_reservations: list[str] = field(default_factory=list)
    finished: dict[str, str] = field(default_factory=dict)  # request id -> outcome
    before: WarmReport | None = None
    after: WarmReport | None = None

    @property
    def clean(self) -> bool:
        return not self.stale_reservations and (self.before is None or not self.before.drifted)


def sale_reconcile(*, sale_id: int, repair: bool, stale_after: float = RESERVATION_STALE_SECONDS) -> ReconcileReport:
    """Square one sale's Redis state with the database. Idempotent; concurrent runs exclude
    each other per sale with a Redis lock (the loser reports `skipped`): a PostgreSQL session
    advisory lock would not hold behind PgBouncer in transaction mode, where consecutive
    statements of one session may run on different server connections.

    A stale reservation is turned into its order rather than given back: the shopper was told
    "queued", and the order writer is idempotent per request id, so this is safe even if the
    reservation's message is still in flight and arrives later (it then finds its order).
    """
    report = ReconcileReport(sale_id=sale_id)
    try:
        with lock(keys.reconcile_lock(sale_id), ttl=keys.RECONCILE_LOCK_TTL):
            _sale_reconcile_locked(report, repair=repair, stale_after=stale_after)
    except LockNotAcquired:
        report.skipped = True
    return report


def _sale_reconcile_locked(report: ReconcileReport, *, repair: bool, stale_after: float) -> None:
    """sale_reconcile's work; the caller holds the sale's reconcile lock."""
    sale_id = report.sale_id
    now = server_time()  # reservations are stamped by Redis's clock (reserve.lua)
    for request_id, value in client().hgetall(keys.reservations(sale_id)).items():
        user_id, reserved_at, _trace = keys.reservation_parse(value)
        if now - reserved_at >= stale_after:
            report.stale_reservations.append(request_id.decode())
            if repair:
                outcome = seckill_order_write(sale_id=sale_id, user_id=user_id, request_id=request_id.decode())
                report.finished[request_id.decode()] = outcome.value
    report.before = _sale_compare(sale_id, apply=False)
    if repair and report.before is not None and report.before.previous_stock is None:
        # Redis lost the sale: rebuild behind the queue (tasks.sale_rebuild), not from a
        # database that has not yet seen the orders still in flight.
        sale_rebuild_request(sale_id=sale_id)
    elif repair and report.before is not None and report.before.drifted:
        report.after = _sale_compare(sale_id, apply=True)


def sales_to_reconcile() -> list[int]:
    recent = timezone.now() - RECONCILE_ENDED_WITHIN
    return list(SeckillGoods.objects.filter(end_at__gte=recent).order_by("pk").values_list("pk", flat=True))


def sale_rebuild_request(*, sale_id: int) -> None:
    """Redis lost this sale's keys: let exactly one worker rebuild them from the database.
    Until then the gate answers "busy" rather than sell from an empty or stale counter."""
    if client().set(keys.rebuild_lock(sale_id), 1, nx=True, ex=keys.SALE_REBUILD_LOCK_TTL):
        from seckill.tasks import sale_rebuild

        try:
            sale_rebuild.delay(sale_id=sale_id)
        except (BrokerError, OSError, RedisError):
            logger.exception("could not queue the rebuild of sale %s", sale_id)
