"""Shoppers reading everybody's pages through the edge while a burst buys (make cluster-test and
make partition-test), and what their answers prove about the edge.

A few readers, beside the burst, load the item page and the list with their session cookie (the
edge drops it and looks the page up) and poll `/goods/getDetails/<id>` without one (the
anonymous poll, kept a second). Each answer is a `View`: its status, the edge's `X-Cache`, and
on the item page the units it shows (`data-stock`). Two things follow:

- `summary`: how many views the edge answered from its cache (HIT, or STALE: a copy past its
  grace while the shop fails), during the fault too, and
  which failed, inside the fault's window or outside it (those fail the row).
- `purge_proof`: the sale sold out during the burst, so the web node that sold its last unit
  purged its pages. The item page the edge held with units left (kept 300 s) must give way to
  one showing none: without the purge it would show the old figure for the rest of the run.
"""

from __future__ import annotations

import re
import threading
import time
from collections import Counter
from dataclasses import dataclass, field
from itertools import cycle

import requests

STOCK = re.compile(r'data-stock="(-?\d+)"')
FROM_CACHE = ("HIT", "STALE")  # the edge's X-Cache answers given from a copy it held
GRACE = 6.0  # seconds after a fault in which its errors count as its own (lab/faults.py's grace)


@dataclass(frozen=True)
class View:
    kind: str  # item, list, poll
    started: float
    finished: float
    status: int  # 0: refused, reset or timed out
    cache: str = ""  # X-Cache: HIT, STALE, MISS, PASS; "" when the edge did not answer
    stock: int | None = None  # the units the item page shows


def in_windows(view: View, windows: list[tuple[float, float]], grace: float = 0.0) -> bool:
    """Whether `view` was in flight at any moment of a fault (or `grace` seconds after it)."""
    return any(view.finished >= start and view.started <= end + grace for start, end in windows)


@dataclass
class Summary:
    views: int = 0
    hits: int = 0
    fault_views: int = 0  # in flight during a fault
    fault_hits: int = 0
    errors: Counter = field(default_factory=Counter)  # (kind, status) -> views not answered 200
    errors_outside: int = 0  # of those, outside every fault's window (+GRACE)


def summary(views: list[View], windows: list[tuple[float, float]]) -> Summary:
    result = Summary(views=len(views))
    for view in views:
        hit = view.status == 200 and view.cache in FROM_CACHE
        result.hits += hit
        if in_windows(view, windows):
            result.fault_views += 1
            result.fault_hits += hit
        if view.status != 200:
            result.errors[(view.kind, view.status)] += 1
            result.errors_outside += not in_windows(view, windows, GRACE)
    return result


@dataclass(frozen=True)
class PurgeProof:
    held: int | None  # units the page the edge held (a HIT) showed before the sell-out reached it
    seconds: float | None  # from the first "sold out" answer to the first page showing 0 units
    # The miss that fetched the held copy, its start and end from the first "sold out" answer:
    # a fetch still in flight when the purge came is kept after it (docs/edge.md, known gaps).
    fetched: tuple[float, float] | None = None

    @property
    def missed(self) -> bool:
        """The edge held a page with units left and never showed the sell-out: a lost purge."""
        return self.held is not None and self.seconds is None


def purge_proof(views: list[View], sold_out_at: float | None) -> PurgeProof:
    """What the item page views show of the sell-out's purge (`sold_out_at`: the first "sold
    out" answer, None when the sale did not sell out: nothing to show)."""
    items = sorted((v for v in views if v.kind == "item" and v.status == 200 and v.stock is not None),
                   key=lambda v: v.started)  # fmt: skip
    zero = next((v for v in items if v.stock == 0), None)
    held = [v.stock for v in items if v.cache in FROM_CACHE and v.stock and (zero is None or v.started < zero.started)]
    if sold_out_at is None or not held:
        return PurgeProof(None, None)
    miss = next((v for v in items if v.cache == "MISS" and v.stock == held[-1]), None)
    fetched = None if miss is None else (round(miss.started - sold_out_at, 2), round(miss.finished - sold_out_at, 2))
    return PurgeProof(held[-1], None if zero is None else round(zero.finished - sold_out_at, 2), fetched)


class Readers:
    """`threads` readers of the sale's pages at `url`, from start() until stop(); their views."""

    KINDS = ("item", "poll", "list", "poll")

    def __init__(self, url: str, sale_id: int, cookies: list[str], *, threads: int = 4, pause: float = 0.02) -> None:
        self.url, self.sale_id, self.cookies, self.pause = url, sale_id, cookies, pause
        self.threads = [threading.Thread(target=self._read, args=(i,), daemon=True) for i in range(threads)]
        self.views: list[View] = []
        self._running = True

    def view(self, kind: str, http: requests.Session, cookie: str = "") -> View:
        path = {"item": f"/goods/detail/{self.sale_id}", "list": "/goods/goodsList",
                "poll": f"/goods/getDetails/{self.sale_id}"}[kind]  # fmt: skip
        # The poll is the anonymous visitor's; pages are loaded with the shopper's cookie.
        headers = {"Cookie": cookie} if cookie and kind != "poll" else {}
        started = time.monotonic()
        try:
            response = http.get(f"{self.url}{path}", headers=headers, timeout=10)
        except requests.RequestException:
            return View(kind, started, time.monotonic(), 0)
        stock = STOCK.search(response.text) if kind == "item" else None
        return View(kind, started, time.monotonic(), response.status_code, response.headers.get("X-Cache", ""),
                    int(stock[1]) if stock else None)  # fmt: skip

    def _read(self, index: int) -> None:
        cookie = self.cookies[index % len(self.cookies)] if self.cookies else ""
        with requests.Session() as http:
            for kind in cycle(self.KINDS[index % len(self.KINDS) :] + self.KINDS[: index % len(self.KINDS)]):
                if not self._running:
                    return
                self.views.append(self.view(kind, http, cookie))
                time.sleep(self.pause)

    def start(self) -> Readers:
        for thread in self.threads:
            thread.start()
        return self

    def stop(self) -> None:
        self._running = False
        for thread in self.threads:
            if thread.is_alive():
                thread.join(timeout=15)

    def until_stock_zero(self, seconds: float) -> list[View]:
        """Load the item page until it shows no unit left, at most `seconds` (the purge of a
        sell-out at the very end of the burst); every view."""
        deadline = time.monotonic() + seconds
        with requests.Session() as http:
            while time.monotonic() < deadline and not any(v.stock == 0 for v in self.views):
                self.views.append(self.view("item", http, self.cookies[0] if self.cookies else ""))
                time.sleep(0.1)
        return self.views
