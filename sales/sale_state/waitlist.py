"""A made draw's waiting list, published to Redis so that a shopper's place on it is answered
without Django (docs/waiting-list.md). Its owner is orders.reoffer, which writes the offers:
it writes the places once, after the draw is applied, and the counter after every commit that
moves it (an offer made or passed over, an order paid or cancelled).

- `places`: each waiting entrant (every entrant but the winners, in the published ranking) and
  their 1-based place on the list; written whole before `length` is, so a reader that finds
  `length` finds every place.
- the counter: `length`, `turns` (the places that had their turn: offered a unit or passed
  over; offers walk the list in order), `unpaid` (units held but not paid yet: the only ones
  that can still come back, since a paid order is never cancelled) and `read`, the stamp of the
  database read `unpaid` came from.
"""

from __future__ import annotations

from dataclasses import dataclass

from sales.sale_state import keys
from seckill_site.redis import client, script
from seckill_site.redis import text as redis_text


def waitlist_published(sale_id: int) -> bool:
    """Are the list's places in Redis (written whole)?"""
    return bool(client().hexists(keys.waitlist(sale_id), "length"))


def waitlist_stamp(sale_id: int) -> int:
    """A stamp for the database read about to be made: larger than every earlier one."""
    return int(client().hincrby(keys.waitlist(sale_id), "stamp", 1))


def waitlist_write(
    *, sale_id: int, user_ids: list[int] | None, length: int, turns: int, unpaid: int, stamp: int
) -> bool:
    """The counter, and with `user_ids` (the list in order) every place first. `unpaid` is
    kept only when `stamp` is newer than the stored read's; True when it was."""
    if user_ids is not None:
        redis = client()
        for at in range(0, len(user_ids), keys.WAITLIST_CHUNK):
            chunk = user_ids[at : at + keys.WAITLIST_CHUNK]
            redis.zadd(keys.waitlist_places(sale_id), {str(user_id): at + n for n, user_id in enumerate(chunk, 1)})
    taken = script("waitlist_write")(keys=[keys.waitlist(sale_id)], args=[length, turns, unpaid, stamp])
    return taken == 1


@dataclass(frozen=True)
class WaitlistRead:
    """One read of the list for one shopper: None where Redis holds nothing (`length` None:
    the list is not published)."""

    length: int | None
    turns: int
    unpaid: int
    place: int | None  # the shopper's 1-based place on the whole list
    result: int | None  # the shopper's answer in the sale (an order id once offered one)
    stock: int | None


def waitlist_read(sale_id: int, user_id: int | None) -> WaitlistRead:
    """The list's counter, the sale's stock and, with `user_id`, the shopper's place and
    answer: one round trip, every key in the sale's slot."""
    pipeline = client().pipeline(transaction=False)
    pipeline.hmget(keys.waitlist(sale_id), ["length", "turns", "unpaid"])
    pipeline.get(keys.stock(sale_id))
    if user_id is not None:
        pipeline.zscore(keys.waitlist_places(sale_id), str(user_id))
        pipeline.get(keys.result(sale_id, user_id))
    found = pipeline.execute()
    (length, turns, unpaid), stock = found[0], found[1]
    place, result = (found[2], found[3]) if user_id is not None else (None, None)
    return WaitlistRead(
        length=int(length) if length is not None else None,
        turns=int(turns or 0),
        unpaid=int(unpaid or 0),
        place=int(place) if place is not None else None,
        result=int(redis_text(result)) if result is not None else None,
        stock=int(stock) if stock is not None else None,
    )
