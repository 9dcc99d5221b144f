"""The seckill gate: one shopper, one try at one unit. The hottest code in the shop.

It never queries PostgreSQL and makes at most one Redis round trip per layer, cheapest layer
first. `seckill_attempt` comes first; its helpers follow in the order it calls them.
"""

import logging
import uuid
from dataclasses import dataclass

from django.conf import settings
from kombu.exceptions import OperationalError as BrokerError
from redis.exceptions import RedisError

from sales import sale_state
from sales.codes import SaleCode
from sales.sale_state import refusal_known
from seckill.services.draw import sale_draw
from seckill.services.reconcile import sale_rebuild_request
from seckill.services.writer import ORDER_FLUSH
from seckill_site.codes import Code, EnvelopeCode
from seckill_site.edge import edge_purge
from seckill_site.logs import request_id_var
from seckill_site.publish import task_publish
from seckill_site.redis import now as redis_now
from seckill_site.shared import SALES_KEY, sale_key

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class Attempt:
    code: EnvelopeCode
    request_id: str | None = None  # the reservation's id, when queued
    retry_after: int = 0  # seconds, with TOO_MANY_REQUESTS
    draw_at: float = 0  # epoch seconds of the draw, with ENTERED and DRAW_PENDING


def seckill_attempt(*, user_id: int, sale_id: int, path: str) -> Attempt:
    """Try to take one unit of a sale for a user; the caller checked the login (layer 1).

    Refusals come back as the Attempt's code; Redis failures propagate. Sold out, not started
    and ended are public facts (the list page shows them), so they are answered first, from this
    process's copies, before the rate limit or the path is touched: a shopper's path survives a
    "sold out" that a cancellation may undo. seckill.middleware and seckill.fastpath give these
    same answers earlier, from the same rule (sales.sale_state.refusal_known). Then one Redis call
    (reserve.lua) counts the rate limit and takes the path and the unit; the session's read
    cannot join it, its keys being in another cluster slot.
    """
    # Layer 2: what this process already knows (after a draw, sold out is "entries closed").
    closed = refusal_known(sale_id, ask=True)
    if closed is not None:
        return Attempt(closed.code)
    # A draw sale's opening window: the shopper enters the draw (enter.lua), no unit taken.
    draw_at = sale_state.draw_at(sale_id)
    if draw_at and redis_now() < draw_at:
        attempt = _enter(sale_id=sale_id, user_id=user_id, path=path)
        if attempt is not None:
            return attempt

    # Layers 3 and 4: reserve.lua has the last word on the window and the stock.
    request_id = uuid.uuid4().hex
    reserved = _reserve(sale_id=sale_id, user_id=user_id, path=path, request_id=request_id)
    if reserved.refusal is sale_state.Refusal.IN_DRAW:  # this process's copy of the window was old
        attempt = _enter(sale_id=sale_id, user_id=user_id, path=path)
        if attempt is not None:
            return attempt
    if reserved.refusal is sale_state.Refusal.DRAW_PENDING:
        # The first buy after the window makes the draw if nobody has (the ETA task, the sweep),
        # then buys what the draw left, first come, first served.
        _draw(sale_id)
        reserved = _reserve(sale_id=sale_id, user_id=user_id, path=path, request_id=request_id)
    if reserved.refusal is not None:
        return _refused(sale_id, reserved)
    if reserved.left == 0:
        sale_state.sold_out_mark(sale_id)
        edge_purge(sale_key(sale_id), SALES_KEY)  # its pages say "on sale" no more

    # Layer 5: most buys publish nothing: a flush queued or running drains their reservation too.
    if not reserved.flush_due or _flush_publish(sale_id):
        return Attempt(Code.SUCCESS, request_id)
    return _publish_failed(sale_id=sale_id, user_id=user_id, request_id=request_id)


def _reserve(*, sale_id: int, user_id: int, path: str, request_id: str) -> sale_state.Reserved:
    return sale_state.reserve(
        sale_id=sale_id,
        user_id=user_id,
        path=path,
        request_id=request_id,
        trace=request_id_var.get() or "",  # the HTTP request's id, for the writer's log line
        flush_mark_ms=settings.SECKILL_WRITER_FLUSH_MARK_MS,
    )


def _enter(*, sale_id: int, user_id: int, path: str) -> Attempt | None:
    """Enter the shopper in the sale's draw; None when no entry window is open after all (the
    caller reserves: reserve.lua then answers by Redis's clock)."""
    entered = sale_state.enter(sale_id=sale_id, user_id=user_id, path=path)
    if entered.refusal is None:
        return Attempt(SaleCode.ENTERED, draw_at=entered.draw_at)
    if entered.refusal is sale_state.Refusal.IN_DRAW:
        return None
    return _refused(sale_id, sale_state.Reserved(entered.refusal, retry_after=entered.retry_after))


def _draw(sale_id: int) -> None:
    """Make the sale's draw if it is due. Never raises: a failure, or another drawer at it,
    leaves the buy to answer DRAW_PENDING and the shopper to try again."""
    try:
        sale_draw(sale_id=sale_id)
    except Exception:  # the ETA task and beat's sweep draw it  # noqa: BLE001
        logger.exception("the draw of sale %s failed in the gate", sale_id)


def _refused(sale_id: int, reserved: sale_state.Reserved) -> Attempt:
    if reserved.refusal is sale_state.Refusal.SOLD_OUT:
        sale_state.sold_out_mark(sale_id)  # from here the closed rule knows it (after a draw: "entries closed")
        return Attempt((refusal_known(sale_id, ask=False) or reserved.refusal).code)
    if reserved.refusal is sale_state.Refusal.NOT_LOADED:
        sale_rebuild_request(sale_id=sale_id)
    assert reserved.refusal is not None  # reserve() names its refusal whenever it took no unit
    return Attempt(reserved.refusal.code, retry_after=reserved.retry_after, draw_at=reserved.draw_at)


def _flush_publish(sale_id: int) -> bool:
    """Publish the sale's flush (seckill.tasks.order_flush); False when the broker refused."""
    try:
        task_publish(ORDER_FLUSH, kwargs={"sale_id": sale_id}, fast=True)
    except (BrokerError, OSError, RedisError):
        logger.exception("publishing the flush of sale %s failed", sale_id)
        return False
    return True


def _publish_failed(*, sale_id: int, user_id: int, request_id: str) -> Attempt:
    """No flush is on its way for this reservation: give its unit back and have the shopper try
    again, unless a writer holds it already (a flush published earlier, or redelivered), in
    which case the shopper is queued after all and the writer settles it."""
    outcome = sale_state.give_back(sale_id=sale_id, user_id=user_id, request_id=request_id)
    if outcome is sale_state.GiveBack.GIVEN_BACK:
        return Attempt(SaleCode.TRY_AGAIN)
    return Attempt(Code.SUCCESS, request_id)
