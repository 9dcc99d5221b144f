"""Where a shopper stands on a made draw's waiting list, from Redis alone (docs/waiting-list.md):
the answer of `/seckill/waitingList/<sale>`, built here once for the fast path
(seckill.fastpath.waitlist) and Django's view alike, so both give the same bytes.

A shopper's `state`:

- `waiting`: on the list, `position` places from the next offer (1: the next unit that comes
  back is theirs);
- `offered`: their turn came and they hold its order ("Pay now": the page asks for the rest);
- `passed`: their turn came and went (the offer expired or was cancelled, or they were passed over);
- `not_listed`: not on the list (a winner, or not an entrant);
- `sold_out`: no unit is left and every unit sold is paid for, so none can come back: the wait
  is over; `ended`: the sale is over.

Anyone not logged in gets the list's public counter with `state` `open`, `sold_out` or `ended`.
"""

from __future__ import annotations

import json

from sales import sale_state
from seckill_site.redis import now as redis_now

WAITING = "waiting"
OFFERED = "offered"
PASSED = "passed"
NOT_LISTED = "not_listed"
SOLD_OUT = "sold_out"
ENDED = "ended"
OPEN = "open"

# How often the page asks: offers come as units come back, seconds or minutes apart.
REFRESH_SECONDS = 5


def waiting_list_data(sale_id: int, user_id: int | None) -> dict | None:
    """The answer's `data`, None while the list is not in Redis (no applied draw, or Redis lost
    it: Django's view publishes it again)."""
    read = sale_state.waitlist_read(sale_id, user_id)
    if read.length is None:
        return None
    window = sale_state.window(sale_id)
    over = (
        ENDED
        if window is not None and redis_now() >= window[1]
        else SOLD_OUT
        if read.stock is not None and read.stock <= 0 and read.unpaid <= 0
        else None
    )
    position = None
    if user_id is None:
        state = over or OPEN
    elif read.place is None:
        state = NOT_LISTED
    elif read.place <= read.turns:
        state = OFFERED if read.result is not None and read.result > 0 else PASSED
    elif over is not None:
        state = over
    else:
        state, position = WAITING, read.place - read.turns
    return {
        "sale": sale_id,
        "state": state,
        "position": position,
        "aheadOfYou": None if position is None else position - 1,
        "length": read.length,
        "offered": min(read.turns, read.length),
        "waiting": max(0, read.length - read.turns),
        "unitsUnpaid": read.unpaid,
        "refreshSeconds": REFRESH_SECONDS,
    }


def waiting_list_body(data: dict) -> bytes:
    """The whole answer, the same bytes whichever layer gives it."""
    return json.dumps({"code": 0, "msg": "success", "data": data}, separators=(", ", ": ")).encode()
