"""The unpaid opening over HTTP (`--modes unpaid`, lab/fairness_http.py): every third winner of
the draw's published ranking lets the pay window pass, the other winners and every entrant a
returned unit is offered to pay through the API, and the scripts keep trying to buy meanwhile.

- `Lapses`, the driver's side: a thread that learns the winners once the deployment has drawn,
  lets the pay window of every third of them pass (their order's deadline moved into the past,
  as the in-process replay does: the shop's fifteen minutes are not waited out), and says when
  the opening is settled: each of those orders closed by the deployment's own unpaid expiry
  (beat's sweep, every EXPIRE_SWEEP_S in this deployment), each unit that came back offered down
  the ranking and the offer paid, then LINGER_S more of the scripts' buys.
- `Payment`, one shopper paying their order as an API client: the order's number from my
  orders, `POST /api/v1/orders/<no>/pay` at Alipay (an address added first when the shop asks
  for one), the Alipay stand-in's cashier page and its "pay" button (tools/alipay_gateway, which
  tools.with_services starts; its notify goes to the deployment), then the order polled until it
  says paid.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from datetime import timedelta
from urllib.parse import urljoin

import requests

from lab.cluster.payments import ADDRESS, PAY_FORM
from orders.codes import OrderCode
from seckill_site.codes import Code

# The deployment's unpaid expiry sweep runs this often (SECKILL_EXPIRE_SWEEP_SECONDS): a unit let
# go comes back within it, not within the shop's usual half minute.
EXPIRE_SWEEP_S = 1
# How often the driver looks at PostgreSQL, and how long the scripts go on once it is settled.
WATCH_S, LINGER_S = 0.3, 2.0
# How often a shopper who was not drawn asks whether a unit was offered to them.
OFFER_POLL_S = 2.0
# A shopper's steps while paying, in order (Payment.step).
PAY_STEPS = ("orders", "pay", "address", "cashier", "press", "watch")


class Lapses:
    """One unpaid opening's driver: who lets the window pass (`walkers`, None before the draw),
    when the first unit came back (`returned_at`, seconds after the opening on `now`), and
    `settled`. Its own thread, from `start` until settled or `stop`."""

    def __init__(self, *, sale_id: int, now: Callable[[], float]) -> None:
        self.sale_id, self.now = sale_id, now
        self.walkers: frozenset[int] | None = None
        self.returned_at: float | None = None
        self.settled = threading.Event()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._watch, name="lapses", daemon=True)

    def start(self) -> Lapses:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(10)

    def walks_away(self, user_id: int) -> bool:
        return self.walkers is not None and user_id in self.walkers

    def _watch(self) -> None:
        from django.db import connection

        try:
            while not self._stop.is_set() and not self._look():
                self._stop.wait(WATCH_S)
            self._stop.wait(LINGER_S)  # the scripts try a while longer after the units went back
        finally:
            self.settled.set()
            connection.close()

    def _look(self) -> bool:
        """Let the walkers' windows pass; True once settled (see the module's docstring)."""
        from django.utils import timezone

        from orders.models import Order, OrderStatus
        from sales.models import OfferOutcome, SaleDraw, SaleDrawOffer

        draw = SaleDraw.objects.filter(sale_id=self.sale_id, drawn_at__isnull=False).first()
        if draw is None:
            return False
        if self.walkers is None:
            self.walkers = frozenset(draw.winner_ids[2::3])
        now = timezone.now()
        orders = Order.objects.filter(sale_id=self.sale_id)
        orders.filter(user_id__in=self.walkers, status=OrderStatus.UNPAID, pay_deadline__gt=now).update(
            pay_deadline=now - timedelta(seconds=1)
        )
        returned = orders.filter(status=OrderStatus.CANCELLED).count()
        if returned and self.returned_at is None:
            self.returned_at = self.now()
        walked = orders.filter(user_id__in=self.walkers, status=OrderStatus.CANCELLED).count()
        offers = SaleDrawOffer.objects.filter(draw=draw).exclude(outcome=OfferOutcome.SKIPPED)
        waiting = len(draw.entrant_ids) - len(draw.winner_ids)
        return (
            walked == len(self.walkers)
            and offers.count() >= min(returned, waiting)
            and not offers.filter(outcome=OfferOutcome.OPEN).exists()
        )

    def returned(self) -> list[int]:
        """The sale's orders that were cancelled: each one's unit came back."""
        from orders.models import Order, OrderStatus

        return list(
            Order.objects.filter(sale_id=self.sale_id, status=OrderStatus.CANCELLED).values_list("pk", flat=True)
        )


class Payment:
    """One shopper paying order `order_id` through the API at `site` with `request` (the
    shopper's: their token, their connection); `step` runs one of PAY_STEPS."""

    def __init__(self, *, order_id: int, site: str, request: Callable[..., requests.Response | None]) -> None:
        self.order_id, self.site, self.request = order_id, site, request
        self.order_no = self.cashier = ""
        self.paid = False  # the order said paid

    def step(self, name: str) -> tuple[str, float] | None:
        """Run step `name`: the next step and the seconds before it, None once paid (or the
        order is past paying: cancelled, or the shop refused)."""
        return getattr(self, f"_{name}")()

    def _orders(self) -> tuple[str, float] | None:
        response = self.request("GET", f"{self.site}/api/v1/orders")
        code, data = _envelope(response)
        found = (
            [o for o in data.get("results", []) if o.get("id") == self.order_id] if code == Code.SUCCESS.code else []
        )
        if found:
            self.order_no = found[0]["orderNo"]
            return "pay", 0.0
        return "orders", 1.0

    def _pay(self) -> tuple[str, float] | None:
        response = self.request("POST", f"{self.site}/api/v1/orders/{self.order_no}/pay", json={"method": "alipay"})
        code, data = _envelope(response)
        if code == Code.SUCCESS.code:
            self.cashier = data["redirectUrl"]
            return "cashier", 0.0
        if code == OrderCode.ADDRESS_NEEDED.code:
            return "address", 0.0
        if response is None or response.status_code >= 500 or response.status_code == 429:
            return "pay", _retry_after(response)
        return None  # the order cannot be paid any more (its window passed): the shop said why

    def _address(self) -> tuple[str, float] | None:
        response = self.request("POST", f"{self.site}/api/v1/users/addresses", json=ADDRESS)
        if response is None or response.status_code >= 500:
            return "address", 1.0
        return "pay", 0.0  # made, or the book is full: either way there is one

    def _cashier(self) -> tuple[str, float] | None:
        """The cashier page, as the browser opens it (this makes the trade at Alipay)."""
        try:
            response = requests.get(self.cashier, timeout=10)
        except requests.RequestException:
            return "cashier", 1.0
        form = PAY_FORM.search(response.text) if response.status_code == 200 else None
        if form is None:
            return ("cashier", 1.0) if response.status_code != 200 else None
        self.cashier = urljoin(self.cashier, form[1])
        return "press", 0.0

    def _press(self) -> tuple[str, float] | None:
        """确认付款 Pay: Alipay sends the buyer back to the shop, and its notify to the shop."""
        try:
            response = requests.post(self.cashier, timeout=10, allow_redirects=False)
        except requests.RequestException:
            return "press", 1.0
        if response.status_code == 302 or (response.status_code == 200 and "已支付" in response.text):
            return "watch", 0.5  # 200 "paid already": an earlier press went through, its answer lost
        return "press", 1.0

    def _watch(self) -> tuple[str, float] | None:
        response = self.request("GET", f"{self.site}/api/v1/orders/{self.order_no}")
        status = _envelope(response)[1].get("status")
        if status == "paid":
            self.paid = True
            return None
        if status not in (None, "unpaid"):
            return None  # cancelled: its window passed before the notify landed
        return "watch", 1.0


def _envelope(response: requests.Response | None) -> tuple[int | None, dict]:
    try:
        body = response.json() if response is not None else {}
    except ValueError:
        return None, {}
    data = body.get("data") if isinstance(body, dict) else None
    return (body.get("code") if isinstance(body, dict) else None), data if isinstance(data, dict) else {}


def _retry_after(response: requests.Response | None) -> float:
    try:
        return max(0.5, float(response.headers.get("Retry-After", 1))) if response is not None else 1.0
    except ValueError:
        return 1.0
