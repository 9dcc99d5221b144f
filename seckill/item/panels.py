"""The item page's panels as the browser picks them (static/js/seckill.js).

The item page is everybody's, so it cannot show one shopper's panel; it carries every variant
seckill/panel.html can show on its sale instead, each rendered once (in the page's language)
into a <template>, with slots where the shopper's figures go: `<span data-slot="orderNo">`,
filled with textContent by the script from /seckill/shopperState. A variant's key says what
picks it, and seckill.js's panelKey() follows the same rules as panel.html's branches:

- `anon`, `anon:sold-out`: logged out (the page shows the first as it is served);
- `queued`, `entered`, `ordered`, `paid`: the shopper's state alone decides;
- `<none|failed|not_drawn>:<action>` for any other state, the action by the sale: `ended`,
  `entries-open`, `entries-soon`, `entries-closed` (a draw's, on and sold out), `sold-out`,
  `buy` (on), `buy-soon` (not started).
"""

from dataclasses import replace
from typing import Any

from django.utils.html import format_html
from django.utils.safestring import SafeString

from sales.models import SaleStatus
from sales.read_model import SalePage
from sales.selectors import ENTRIES_CLOSED, ENTRIES_OPEN, ENTRIES_SOON
from seckill import selectors


def slot(name: str) -> SafeString:
    """Where seckill.js puts the shopper's `name` (a field of /seckill/shopperState's answer)."""
    return format_html('<span data-slot="{}"></span>', name)


# The figures of each state's panel, as slots.
_SHOPPER = {
    selectors.STATE_QUEUED: {},
    selectors.STATE_ENTERED: {"drawAtTime": slot("drawAtTime")},
    selectors.STATE_ORDERED: {
        "price": slot("price"),
        "payDeadlineAt": slot("payDeadlineAt"),
        "orderNo": slot("orderNo"),
    },
    selectors.STATE_PAID: {"orderNo": slot("orderNo")},
}

# action: (status, units left, entries state) that takes panel.html's branch for it.
_ACTIONS = {
    "ended": (SaleStatus.ENDED, 1, None),
    "buy": (SaleStatus.ON, 1, None),
    "buy-soon": (SaleStatus.NOT_STARTED, 1, None),
    "sold-out": (SaleStatus.ON, 0, None),
}
_DRAW_ACTIONS = {
    "ended": (SaleStatus.ENDED, 1, ENTRIES_CLOSED),
    "buy": (SaleStatus.ON, 1, ENTRIES_CLOSED),
    "entries-open": (SaleStatus.NOT_STARTED, 1, ENTRIES_OPEN),
    "entries-soon": (SaleStatus.NOT_STARTED, 1, ENTRIES_SOON),
    "entries-closed": (SaleStatus.ON, 0, ENTRIES_CLOSED),
}


def panel_variants(*, page: SalePage) -> list[dict[str, Any]]:
    """Every panel of this sale's page: `key` and the context panel.html is rendered with."""
    entries = page.entries

    def variant(key: str, shopper: dict | None, status: int, left: int, entries_state: str | None) -> dict:
        shown_entries = None if entries is None or entries_state is None else replace(entries, state=entries_state)
        return {
            "key": key,
            "shopper": shopper,
            "status": status,
            "stock_left": left,
            "page": replace(page, entries=shown_entries),
        }

    closed = None if entries is None else ENTRIES_CLOSED
    variants = [
        variant("anon", None, SaleStatus.NOT_STARTED, 1, closed),
        variant("anon:sold-out", None, SaleStatus.ON, 0, closed),
    ]
    for state, figures in _SHOPPER.items():
        if state == selectors.STATE_ENTERED and entries is None:
            continue
        variants.append(variant(state, {"state": state, **figures}, SaleStatus.ON, 1, closed))
    states = [selectors.STATE_NONE, selectors.STATE_FAILED]
    if entries is not None:
        states.append(selectors.STATE_NOT_DRAWN)
    for state in states:
        # Not drawn: their place on the waiting list for units that come back (hidden when none).
        shopper = {"state": state, "waitingPlace": slot("waitingPlace")} if state == selectors.STATE_NOT_DRAWN else None
        for action, (status, left, entries_state) in (_ACTIONS if entries is None else _DRAW_ACTIONS).items():
            variants.append(variant(f"{state}:{action}", shopper or {"state": state}, status, left, entries_state))
    return variants


def entry_variants() -> list[dict[str, Any]]:
    """seckill/draw_entry.html's variants: `won`, `lost` (a made draw's entry number) and `id`
    (an entrant before the draw), with the shopper's figures as slots."""
    user = slot("userId")
    entry = {"number": slot("number"), "entrants": slot("entrants")}
    return [
        {"key": "won", "shopper": {"userId": user, "drawEntry": {**entry, "won": True}}},
        {"key": "lost", "shopper": {"userId": user, "drawEntry": {**entry, "won": False}}},
        {"key": "id", "shopper": {"userId": user, "state": selectors.STATE_ENTERED}},
    ]


def draw_result_slots() -> dict[str, Any]:
    """A made draw's figures as slots, for seckill/draw_result.html's <template>."""
    return {
        "drawn": True,
        "units": slot("units"),
        "entrants": slot("entrants"),
        "seed": slot("seed"),
        "winnerIds": True,
        "winnersShown": slot("winners"),
        "winnersMore": 0,
    }
