"""Shoppers paying their orders while a row's fault strikes, and the proof that no payment the
shop acknowledged was lost.

- `AlipayStandIn`: the Alipay stand-in (tools/alipay_gateway) as one more process of the
  topology, and what the web nodes, workers and beat need to take payments at it, its notifies
  sent to the shop's address they are given (the balancer).
- `Payers`: a few threads that follow the shoppers told "queued" and pay each order as its
  shopper would: the result polled as the item page polls it, the order's number from the item
  page's refresh, the cashier from the pay API (an address added first when the shop asks for
  one), the stand-in's cashier page and its "pay" button, the return to the shop's waiting page,
  then the order polled until it says paid. Alipay's notify goes from the stand-in to the shop
  meanwhile, and again on Alipay's schedule while the shop does not answer "success".
  A shopper told 503 "busy" (or left without an answer) asks again a little later.
- `payments_check`: after the row, every acknowledged payment a captured payment of a paid
  order in PostgreSQL, and the money invariants over the sale's orders.

A payment is *acknowledged* when the shop answered the stand-in's notify "success" (the stand-in
records each attempt and its answer, to the second): what the provider is told. The shopper's
order saying paid is not enough: a leader cut off from its standbys shows a commit still waiting
for one to every reader, and loses it when demoted (docs/database.md, known gaps).
"""

from __future__ import annotations

import heapq
import itertools
import os
import re
import threading
import time
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from http.cookiejar import DefaultCookiePolicy
from pathlib import Path
from urllib.parse import urljoin

import requests

from lab.shopper import Answer, Shopper, log_in
from tools.alipay_gateway import keys, times
from tools.alipay_gateway.config import DEFAULT_RETRY_SCALE
from tools.net import wait_until
from tools.payment_services import alipay_command, alipay_env

STANDIN_PORT = 18010
BUSY = 503
TIMEOUT_S = 30  # a request without an answer by then is one the shopper gives up on
# The shop's answers in its JSON envelope (seckill_site/codes.py).
SUCCESS, ADDRESS_NEEDED, PAYMENT_UNAVAILABLE = 0, 500602, 500603
PAY_FORM = re.compile(r'action="(/cashier/[^"]+/pay)"')
ADDRESS = {"recipient": "Lab Payer", "phone": "13800000000", "region": "上海市", "city": "上海市",
           "district": "黄浦区", "street": "1 Lab Road"}  # fmt: skip


@dataclass(frozen=True)
class AlipayStandIn:
    """The Alipay stand-in on simulated host `host` at `address`:`port`, its keys and trades in
    `state`. `retry_scale` shortens Alipay's notify retry schedule (4 min, 10 min, ... times it)."""

    address: str
    state: Path
    port: int = STANDIN_PORT
    host: str | None = "payments"
    name: str = "alipay"  # the process's name in the topology (its log: logs/<name>.log)
    retry_scale: float = DEFAULT_RETRY_SCALE

    @property
    def url(self) -> str:
        return f"http://{self.address}:{self.port}"

    def node_env(self, shop_url: str | None) -> dict[str, str]:
        """What every web node, worker and beat needs to take Alipay payments here: the app's
        credentials, the gateway, and PAYMENT_PUBLIC_URL, where the stand-in sends its notifies
        and the shopper back (`shop_url`; None: each request's own host). Makes the keys first:
        a node reads them as it starts, before the stand-in may have made them."""
        keys.ensure(self.state)
        env = alipay_env(self.port, self.state, self.address)
        if shop_url is not None:
            env["PAYMENT_PUBLIC_URL"] = shop_url.rstrip("/")
        return env

    def start(self, topology, timeout: float = 30) -> None:
        """Spawn it through `topology.spawn(name, command, env=..., host=...)` (a Topology, or a
        tools.processes.Processes) and wait until it answers; RuntimeError if it does not."""
        command = alipay_command(self.port, self.state, self.address, self.retry_scale)
        topology.spawn(self.name, command, env=dict(os.environ), host=self.host)
        if not wait_until(self.answering, timeout, 0.2):
            raise RuntimeError(f"the Alipay stand-in did not answer on {self.url}; see its log ({self.name}.log)")

    def answering(self) -> bool:
        try:
            return requests.get(f"{self.url}/_control/trades", timeout=2).ok
        except requests.RequestException:
            return False


def all_delivered(trades: list[dict]) -> bool:
    """Whether every notify the stand-in sends has been answered "success"."""
    return all(note.get("delivered") for trade in trades for note in trade.get("notifications", []))


def standin_trades(url: str) -> list[dict]:
    """Every trade the stand-in at `url` holds, with its notifies and each delivery attempt."""
    response = requests.get(f"{url}/_control/trades", timeout=TIMEOUT_S)
    response.raise_for_status()
    return response.json()["trades"]


# --- one shopper's payment ------------------------------------------------------------------

ORDER, STATE, PAY, ADDRESS_ADD, CASHIER, PRESS, RETURN, WATCH = (
    "order", "state", "pay", "address", "cashier", "press", "return", "watch")  # fmt: skip


@dataclass
class Paying:
    """One shopper's way from "queued" to a paid order; times are time.monotonic()'s."""

    shopper: Shopper
    offered_at: float
    step: str = ORDER
    attempt: int = 0  # polls or retries at the current step
    order_id: int = 0
    order_no: str = ""
    trade_no: str = ""
    cashier_url: str = ""
    return_url: str = ""
    started_at: float | None = None  # the shop answered with a cashier
    paid_at: float | None = None  # the buyer pressed "pay" at the stand-in's cashier
    seen_paid_at: float | None = None  # the shopper's order said paid
    notified_at: float | None = None  # the shop answered the stand-in's notify "success"
    busy: int = 0  # 503 answers on the way
    outcome: str = ""  # once done: paid, no order, refused: ...

    @property
    def acknowledged_at(self) -> float | None:
        return self.notified_at


@dataclass
class PaymentFigures:
    """What the payers did, for the row's table and notes."""

    offered: int = 0  # shoppers told "queued" that the payers followed
    ordered: int = 0  # of those, whose buy became an order
    started: int = 0  # payments started: the shop answered with a cashier
    paid: int = 0  # paid at the stand-in
    acknowledged: int = 0  # the shop answered the notify "success", or the order said paid
    unacknowledged: int = 0  # paid at the stand-in, acknowledged by neither when the payers finished
    busy: int = 0  # 503 answers from the shop to the payers
    busy_payments: int = 0  # payments that met at least one
    broken: int = 0  # requests to the shop left without an answer (reset, timeout)
    server_errors: int = 0  # the shop's 5xx answers other than 503 "busy": never right
    notifies_retried: int = 0  # payment notifies the stand-in had to send more than once
    notify_failures: Counter = field(default_factory=Counter)  # failed notify attempts by the shop's answer
    unfinished: Counter = field(default_factory=Counter)  # shoppers still at a step when time ran out
    # Payments the shop or the stand-in refused, and the harness's own errors, by kind.
    problems: Counter = field(default_factory=Counter)

    def server_errors_all(self) -> int:
        """The shop's 5xx other than 503, to the shoppers and to the stand-in's notifies."""
        notify = sum(count for answer, count in self.notify_failures.items() if answer.isdigit()
                     and int(answer) >= 500 and int(answer) != BUSY)  # fmt: skip
        return self.server_errors + notify

    def note(self) -> str:
        text = (f"payers: {self.offered} followed, {self.ordered} orders, {self.started} payments started, "
                f"{self.paid} paid at Alipay, {self.acknowledged} acknowledged, {self.unacknowledged} not; "
                f"{self.busy} answers 503 to {self.busy_payments} payments, {self.server_errors} other 5xx, "
                f"{self.broken} broken; "
                f"{self.notifies_retried} notifies retried")  # fmt: skip
        if self.notify_failures:
            text += f" (failed attempts {dict(self.notify_failures)})"
        if self.unfinished:
            text += f"; unfinished {dict(self.unfinished)}"
        if self.problems:
            text += f"; problems {dict(self.problems)}"
        return text


_local = threading.local()


def _http() -> requests.Session:
    """One keep-alive pool per thread. It keeps no cookies: each shopper's are in their headers,
    and a pool serves many shoppers."""
    http = getattr(_local, "http", None)
    if http is None:
        http = _local.http = requests.Session()
        http.cookies.set_policy(DefaultCookiePolicy(allowed_domains=[]))
    return http


def _backoff(attempt: int) -> float:
    """The item page's retry and poll spacing: 0.3 s doubling to 3 s."""
    return min(0.3 * 2**attempt, 3.0)


class Payers:
    """`threads` threads paying, at the shop at `url` and the stand-in at `standin_url`, the
    orders of sale `sale_id` of the shoppers offered to them (`answered`, `offer`); every
    `every`-th shopper offered pays, the others leave their order unpaid.

        payers = Payers(url, sale_id, standin.url).start()
        ... payers.answered(shopper, answer) for each buy answered ...
        figures = payers.finish(timeout=120)
        check = payers.check()       # with the harness's Django on the healed database
    """

    def __init__(self, url: str, sale_id: int, standin_url: str, *, threads: int = 4, every: int = 1) -> None:
        self.url, self.sale_id, self.standin_url = url.rstrip("/"), sale_id, standin_url.rstrip("/")
        self.threads, self.every = threads, every
        self.payments: dict[int, Paying] = {}  # user id -> their payment
        self.figures = PaymentFigures()
        self._offers = 0
        self._due: list[tuple[float, int, Paying]] = []  # (monotonic due time, tie-break, payment), a heap
        self._order = itertools.count()
        self._working = 0  # payments a thread holds right now
        self._wake = threading.Condition()
        self._closed = self._stopping = False
        self._workers: list[threading.Thread] = []

    # --- the caller's side -----------------------------------------------------------------

    def start(self) -> Payers:
        for index in range(self.threads):
            worker = threading.Thread(target=self._run, name=f"payer-{index}", daemon=True)
            worker.start()
            self._workers.append(worker)
        return self

    def answered(self, shopper: Shopper, answer: Answer) -> None:
        """A buy of `shopper` was answered `answer`: followed when it said "queued"."""
        if answer.status == 200 and answer.code == SUCCESS:
            self.offer(shopper)

    def offer(self, shopper: Shopper) -> None:
        """`shopper` was told "queued": their page polls for the order from now on."""
        with self._wake:
            if self._closed or shopper.user_id in self.payments:
                return
            self._offers += 1
            if (self._offers - 1) % self.every:
                return
            paying = self.payments[shopper.user_id] = Paying(shopper, time.monotonic())
            self.figures.offered += 1
            self._schedule(paying, 0.0)

    def finish(self, timeout: float = 120) -> PaymentFigures:
        """Take no more shoppers, let those followed finish (at most `timeout` seconds: a
        payment still waiting then is counted where it stands), stop the threads, and read the
        stand-in's notifies: the figures."""
        deadline = time.monotonic() + timeout
        with self._wake:
            self._closed = True
            while (self._due or self._working) and time.monotonic() < deadline:
                self._wake.wait(max(0.0, min(1.0, deadline - time.monotonic())))
            self._stopping = True
            self._wake.notify_all()
        for worker in self._workers:
            worker.join(timeout=TIMEOUT_S + 5)
        # Alipay sends a notify again until the shop answers "success": wait for those in flight.
        wait_until(lambda: all_delivered(standin_trades(self.standin_url)), max(0.0, deadline - time.monotonic()), 1)
        notifies_read(standin_trades(self.standin_url), self.payments.values(), self.figures)
        figures = self.figures
        payments = list(self.payments.values())
        figures.ordered = sum(p.order_id > 0 for p in payments)
        figures.started = sum(p.started_at is not None for p in payments)
        figures.paid = sum(p.paid_at is not None for p in payments)
        figures.acknowledged = sum(p.acknowledged_at is not None for p in payments)
        figures.unacknowledged = sum(p.paid_at is not None and p.acknowledged_at is None for p in payments)
        figures.busy_payments = sum(p.busy > 0 for p in payments)
        figures.unfinished = Counter(p.step for p in payments if not p.outcome)
        return figures

    def acknowledged(self) -> list[Paying]:
        return [p for p in self.payments.values() if p.acknowledged_at is not None]

    def acknowledged_between(self, start: float, end: float) -> int:
        """Payments acknowledged between two time.monotonic() moments (a fault's window)."""
        return sum(start <= p.acknowledged_at <= end for p in self.acknowledged() if p.acknowledged_at is not None)

    def check(self) -> PaymentCheck:
        """payments_check over the acknowledged payments and the sale's orders."""
        from orders.models import SeckillOrder

        _fresh_connections()
        orders = list(SeckillOrder.objects.filter(sale_id=self.sale_id).values_list("order_id", flat=True))
        return payments_check(self.acknowledged(), orders=orders)

    # --- the threads ------------------------------------------------------------------------

    def _schedule(self, paying: Paying, delay: float) -> None:
        heapq.heappush(self._due, (time.monotonic() + delay, next(self._order), paying))
        self._wake.notify_all()

    def _run(self) -> None:
        while True:
            with self._wake:
                while not self._stopping and (not self._due or self._due[0][0] > time.monotonic()):
                    self._wake.wait(None if not self._due else self._due[0][0] - time.monotonic())
                if self._stopping:
                    return
                _, _, paying = heapq.heappop(self._due)
                self._working += 1
            try:
                delay = self._step(paying)
            except Exception as error:  # noqa: BLE001 - the harness's own failure: try the step again
                paying.outcome, delay = "", _backoff(paying.attempt)
                paying.attempt += 1
                self._count("harness", repr(error)[:80])
            with self._wake:
                self._working -= 1
                if delay is not None and not self._stopping:
                    self._schedule(paying, delay)
                self._wake.notify_all()

    def _count(self, kind: str, what: str) -> None:
        with self._wake:
            self.figures.problems[f"{kind}: {what}"] += 1

    def _shop(self, paying: Paying, method: str, path: str, **options) -> requests.Response | None:
        """One request of the shopper's to the shop; None (and counted) when it went unanswered,
        the response otherwise, 503s counted. A 401 (the session went with Redis) logs them in again."""
        shopper = paying.shopper
        try:
            response = _http().request(method, f"{self.url}{path}", headers=shopper.headers(), timeout=TIMEOUT_S,
                                       allow_redirects=False, **options)  # fmt: skip
        except requests.RequestException:
            with self._wake:
                self.figures.broken += 1
            return None
        if response.status_code == BUSY:
            paying.busy += 1
            with self._wake:
                self.figures.busy += 1
        elif response.status_code == 401:
            log_in([shopper])
        elif response.status_code >= 500:
            with self._wake:
                self.figures.server_errors += 1
        return response

    def _again(self, paying: Paying) -> float:
        paying.attempt += 1
        return _backoff(paying.attempt - 1)

    def _next(self, paying: Paying, step: str) -> float:
        paying.step, paying.attempt = step, 0
        return 0.0

    def _step(self, paying: Paying) -> float | None:
        """Run `paying`'s current step once: the delay before its next one, None once done."""
        return getattr(self, f"_step_{paying.step}")(paying)

    def _step_order(self, paying: Paying) -> float | None:
        """Poll the buy's result as the item page does: an order id, 0 queued, -1 no order."""
        response = self._shop(paying, "GET", "/seckill/result", params={"goodsId": self.sale_id})
        data = _data(response)
        if isinstance(data, int) and data > 0:
            paying.order_id = data
            return self._next(paying, STATE)
        if isinstance(data, int) and data < 0 and data != -2:
            paying.outcome = "no order"
            return None
        return self._again(paying)

    def _step_state(self, paying: Paying) -> float | None:
        """The item page's shopper state, which shows the order with "Pay now": its number."""
        response = self._shop(paying, "GET", "/seckill/shopperState", params={"goodsId": self.sale_id})
        data = _data(response)
        shopper = data.get("shopper") if isinstance(data, dict) else None
        if isinstance(shopper, dict) and shopper.get("orderNo"):
            paying.order_no = str(shopper["orderNo"])
            return self._next(paying, PAY)
        return self._again(paying)

    def _step_pay(self, paying: Paying) -> float | None:
        """Go to Alipay's cashier from the order (the pay API answers its address)."""
        response = self._shop(paying, "POST", f"/api/v1/orders/{paying.order_no}/pay", json={"method": "alipay"})
        body = _body(response)
        code = body.get("code")
        if code == SUCCESS:
            data = body["data"]
            paying.trade_no, paying.cashier_url = data["tradeNo"], data["redirectUrl"]
            paying.started_at = time.monotonic()
            return self._next(paying, CASHIER)
        if code == ADDRESS_NEEDED:
            return self._next(paying, ADDRESS_ADD)
        if response is None or response.status_code >= 500 or code == PAYMENT_UNAVAILABLE:
            return self._again(paying)
        paying.outcome = f"refused: {code} {body.get('msg', response.status_code)}"
        self._count("pay", f"{code} {body.get('msg', response.status_code)}")
        return None

    def _step_address(self, paying: Paying) -> float | None:
        """The shop asked for a shipping address: add one to the address book, then pay again."""
        response = self._shop(paying, "POST", "/api/v1/users/addresses", json=ADDRESS)
        if response is None or response.status_code >= 500:
            return self._again(paying)
        return self._next(paying, PAY)  # made, or the book is full: either way there is one

    def _step_cashier(self, paying: Paying) -> float | None:
        """Open the cashier page as the browser does (this makes the trade at Alipay)."""
        try:
            response = _http().get(paying.cashier_url, timeout=TIMEOUT_S)
        except requests.RequestException:
            return self._again(paying)
        form = PAY_FORM.search(response.text) if response.status_code == 200 else None
        if form is not None:
            paying.cashier_url = urljoin(paying.cashier_url, form[1])
            return self._next(paying, PRESS)
        if response.status_code == 200:
            paying.outcome = "refused: the cashier offered no pay button"
            self._count("cashier", response.text[:80])
            return None
        return self._again(paying)

    def _step_press(self, paying: Paying) -> float | None:
        """Press "确认付款 Pay": Alipay sends the buyer back to the shop (and its notify after)."""
        try:
            response = _http().post(paying.cashier_url, timeout=TIMEOUT_S, allow_redirects=False)
        except requests.RequestException:
            return self._again(paying)
        if response.status_code == 302 or (response.status_code == 200 and "已支付" in response.text):
            # 200 "paid already": an earlier press went through, its answer lost on the way.
            paying.paid_at = paying.paid_at or time.monotonic()
            paying.return_url = response.headers.get("Location", "")
            return self._next(paying, RETURN if paying.return_url else WATCH)
        return self._again(paying)

    def _step_return(self, paying: Paying) -> float | None:
        """The browser follows Alipay's redirect to the shop's waiting page, once: the page
        itself only polls the order, which the next step does."""
        try:
            _http().get(paying.return_url, headers=paying.shopper.headers(), timeout=TIMEOUT_S)
        except requests.RequestException:
            pass
        return self._next(paying, WATCH)

    def _step_watch(self, paying: Paying) -> float | None:
        """Poll the order, as the waiting page does, until it says paid."""
        response = self._shop(paying, "GET", f"/api/v1/orders/{paying.order_no}")
        data = _data(response)
        status = data.get("status") if isinstance(data, dict) else None
        if status == "paid":
            paying.seen_paid_at = time.monotonic()
            paying.outcome = "paid"
            return None
        if status not in (None, "unpaid"):  # cancelled or refunded: this shopper's payment is over
            paying.outcome = f"order {status}"
            self._count("order", str(status))
            return None
        paying.attempt += 1
        return 1.0


def _body(response: requests.Response | None) -> dict:
    if response is None:
        return {}
    try:
        body = response.json()
    except ValueError:  # a balancer's or edge's own error page
        return {}
    return body if isinstance(body, dict) else {}


def _data(response: requests.Response | None):
    body = _body(response)
    return body.get("data") if body.get("code") == SUCCESS else None


def _fresh_connections() -> None:
    """The harness's own connections may lead to a leader that is gone: new ones."""
    from django.db import connections

    connections.close_all()


def notifies_read(trades: Iterable[dict], payments: Iterable[Paying], figures: PaymentFigures) -> None:
    """From the stand-in's record of `trades` (standin_trades): when the shop answered each of
    `payments`' notify "success" (their `notified_at`), into `figures` how many notifies were
    sent more than once and what the failed attempts were answered."""
    ours = {p.trade_no: p for p in payments if p.trade_no}
    offset = time.time() - time.monotonic()  # the stand-in's clock is the wall's
    for trade in trades:
        paying = ours.get(trade["out_trade_no"])
        if paying is None:
            continue
        for notification in trade["notifications"]:
            params = notification["params"]
            if params.get("trade_status") != "TRADE_SUCCESS" or "refund_fee" in params:
                continue  # a refund's notify, not the payment's
            deliveries = notification["deliveries"]
            figures.notifies_retried += len(deliveries) > 1
            for delivery in deliveries:
                if not delivery["delivered"]:
                    figures.notify_failures[str(delivery["status"] or "no answer")] += 1
            delivered = next((d for d in deliveries if d["delivered"]), None)
            if delivered is not None:
                paying.notified_at = times.parse(delivered["at"]).timestamp() - offset
                paying.outcome = paying.outcome or "paid"


# --- after the row --------------------------------------------------------------------------


@dataclass
class PaymentCheck:
    acknowledged: int = 0
    lost: list[str] = field(default_factory=list)  # acknowledged, then not a captured payment of a paid order
    refunded: int = 0  # acknowledged, then refunded in full (the order was paid by another attempt)
    money: list[str] = field(default_factory=list)  # orders.payments.reconcile.money_check over the sale

    @property
    def ok(self) -> bool:
        return not (self.lost or self.money)


def payments_check(acknowledged: Sequence[Paying], *, orders: list[int]) -> PaymentCheck:
    """Each acknowledged payment against PostgreSQL as the harness's Django reaches it: kept
    (succeeded, its order paid), refunded in full (a duplicate: not lost), or lost; and
    money_check over `orders` (order ids)."""
    from orders.models import OrderStatus, Payment, PaymentStatus
    from orders.payments.reconcile import money_check

    check = PaymentCheck(acknowledged=len(acknowledged))
    found = {
        trade_no: (status, order_no, order_status)
        for trade_no, status, order_no, order_status in Payment.objects.filter(
            trade_no__in=[p.trade_no for p in acknowledged]
        ).values_list("trade_no", "status", "order__order_no", "order__status")
    }
    for paying in acknowledged:
        status, order_no, order_status = found.get(paying.trade_no, (None, None, None))
        if status == PaymentStatus.SUCCEEDED and order_status == OrderStatus.PAID and order_no == paying.order_no:
            continue
        if status in (PaymentStatus.REFUNDING, PaymentStatus.REFUNDED) and order_no == paying.order_no:
            check.refunded += 1
            continue
        why = "no such payment" if status is None else f"payment {status}, order {order_no} {order_status}"
        check.lost.append(f"{paying.order_no}/{paying.trade_no}: {why}")
    check.money = [f"{p.kind} ({p.trade_no})" for p in money_check(orders=orders)]
    return check
