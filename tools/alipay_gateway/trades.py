"""The gateway's state: trades, their refunds and the notifications Alipay owes the merchant.

One `Store` holds it all in memory behind one lock and writes it whole to `trades.json` within
half a second of a change (a temporary file renamed over the old one) and when it closes, so a
restart keeps the trades. Its
operations are Alipay's rules for a trade's life:

    (none) --first cashier visit--> WAIT_BUYER_PAY --pay--> TRADE_SUCCESS --full refund--> TRADE_CLOSED
                                    WAIT_BUYER_PAY --close, or time_expire passes--> TRADE_CLOSED

A refused operation raises `BusinessError` with Alipay's sub_code. Whatever an operation
returns is a copy, safe to read after the lock is released.
"""

from __future__ import annotations

import copy
import json
import os
import re
import secrets
import tempfile
import threading
import time
import uuid
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from datetime import date, datetime
from decimal import Decimal, InvalidOperation
from pathlib import Path

from tools.alipay_gateway import times

# Alipay's trade statuses. TRADE_FINISHED (the refund period over) is never reached here.
WAIT_BUYER_PAY = "WAIT_BUYER_PAY"
TRADE_SUCCESS = "TRADE_SUCCESS"
TRADE_CLOSED = "TRADE_CLOSED"
TRADE_FINISHED = "TRADE_FINISHED"
CENT = Decimal("0.01")
# The longest a change waits to be written to trades.json.
SAVE_EVERY_S = 0.5
# Alipay's limits on one trade's amount, in yuan.
AMOUNT_MIN, AMOUNT_MAX = CENT, Decimal("100000000")
# Alipay: "64 characters at most, letters, digits and underscores only".
OUT_TRADE_NO = re.compile(r"[A-Za-z0-9_]{1,64}")
# The one buyer of the stand-in: a user id as Alipay gives them (2088 and 12 digits) and the
# masked logon id Alipay shows merchants.
BUYER_ID = "2088102177846880"
BUYER_LOGON_ID = "buy***@example.com"


class BusinessError(Exception):
    """Alipay refuses the operation: code 40004 "Business Failed" with this sub_code."""

    def __init__(self, sub_code: str, sub_msg: str) -> None:
        super().__init__(f"{sub_code}: {sub_msg}")
        self.sub_code = sub_code
        self.sub_msg = sub_msg


def amount(value: object) -> Decimal:
    """A yuan amount with at most two decimals, from a string ("19.99") or a JSON number; ValueError
    for anything else. Floats are read through their shortest text, as Alipay reads the JSON."""
    try:
        parsed = Decimal(str(value).strip())
        exact = parsed.is_finite() and parsed == parsed.quantize(CENT)
    except InvalidOperation:  # not a number, or too large to have cents
        exact = False
    if not exact:
        raise ValueError(f"{value!r} is not an amount in yuan with at most two decimals")
    return parsed.quantize(CENT)


def yuan(value: Decimal) -> str:
    return str(value.quantize(CENT))


@dataclass
class Order:
    """What a page-pay or wap-pay request asks for: the trade it creates on the first visit."""

    method: str
    out_trade_no: str
    subject: str
    total_amount: str
    product_code: str
    time_expire: str | None
    notify_url: str
    return_url: str


@dataclass
class Refund:
    out_request_no: str
    refund_amount: str
    refund_reason: str
    gmt_refund: str
    refund_fee: str
    """The trade's refunded total once this refund was made, as Alipay answers it."""


@dataclass
class Delivery:
    """One attempt at a notify: when, whether on the schedule or sent by hand, and the answer."""

    at: str
    scheduled: bool
    status: int | None
    answer: str
    delivered: bool


@dataclass
class Notification:
    """One event's async notify. `params` are the event's, `notify_id` among them, without
    `notify_time` and the signature, which each attempt adds."""

    notify_id: str
    url: str
    params: dict[str, str]
    first_attempt: float | None = None
    """Epoch seconds of the first scheduled attempt: the retry schedule counts from it."""
    delivered: bool = False
    deliveries: list[Delivery] = field(default_factory=list)

    @property
    def scheduled_attempts(self) -> int:
        return sum(1 for delivery in self.deliveries if delivery.scheduled)


@dataclass
class Trade:
    method: str
    out_trade_no: str
    trade_no: str
    subject: str
    total_amount: str
    product_code: str
    notify_url: str
    return_url: str
    status: str
    gmt_create: str
    time_expire: str | None = None
    gmt_payment: str | None = None
    gmt_close: str | None = None
    refunds: list[Refund] = field(default_factory=list)
    notifications: list[Notification] = field(default_factory=list)

    @property
    def refunded(self) -> Decimal:
        return sum((amount(refund.refund_amount) for refund in self.refunds), Decimal("0.00"))

    @staticmethod
    def load(data: dict) -> Trade:
        data = dict(data)
        data["refunds"] = [Refund(**refund) for refund in data.get("refunds", [])]
        notifications = []
        for notification in data.get("notifications", []):
            deliveries = [Delivery(**delivery) for delivery in notification.get("deliveries", [])]
            notifications.append(Notification(**{**notification, "deliveries": deliveries}))
        data["notifications"] = notifications
        return Trade(**data)


class Store:
    """The trades of one merchant app, `app_id`, selling as `seller_id`; kept in `path` if given.
    `owed(notify_id)` is called, inside the lock, for every notification an event creates."""

    def __init__(
        self, path: Path | None, *, app_id: str, seller_id: str, owed: Callable[[str], None] = lambda notify_id: None
    ) -> None:
        self._path = path
        self._app_id = app_id
        self._seller_id = seller_id
        self._owed = owed
        self._lock = threading.RLock()
        self._trades: dict[str, Trade] = {}
        # Changes are written by a thread of their own, at most every SAVE_EVERY_S: a long run
        # makes thousands of trades, and writing them all after each change held every caller.
        self._dirty = threading.Event()
        self._stopped = False
        if path is not None:
            threading.Thread(target=self._writer, name="trades.json", daemon=True).start()
        if path is not None and path.exists():
            for data in json.loads(path.read_text(encoding="utf-8"))["trades"]:
                trade = Trade.load(data)
                self._trades[trade.out_trade_no] = trade

    # The buyer's side: the cashier.

    def open(self, order: Order) -> Trade:
        """The trade `order` names, created (WAIT_BUYER_PAY) on the first visit. A visit again shows
        the same trade, in whatever state it is; one with another amount is a tampered request."""
        with self._lock:
            trade = self._trades.get(order.out_trade_no)
            if trade is None:
                created = times.now()
                if order.time_expire is not None and created >= times.parse(order.time_expire):
                    raise BusinessError("ACQ.TRADE_HAS_CLOSE", "交易已超时关闭 The trade's time_expire has passed")
                trade = Trade(
                    method=order.method,
                    out_trade_no=order.out_trade_no,
                    trade_no=self._trade_no(created),
                    subject=order.subject,
                    total_amount=order.total_amount,
                    product_code=order.product_code,
                    notify_url=order.notify_url,
                    return_url=order.return_url,
                    status=WAIT_BUYER_PAY,
                    gmt_create=times.text(created),
                    time_expire=order.time_expire,
                )
                self._trades[trade.out_trade_no] = trade
                self._save()
            elif amount(trade.total_amount) != amount(order.total_amount):
                raise BusinessError("ACQ.CONTEXT_INCONSISTENT", "交易信息被篡改 The amount differs from the trade's")
            else:
                self._expire(trade)
            return copy.deepcopy(trade)

    def pay(self, out_trade_no: str) -> Trade:
        """The buyer pays: WAIT_BUYER_PAY becomes TRADE_SUCCESS and the payment's notify is owed."""
        with self._lock:
            trade = self._find(out_trade_no, None)
            if trade.status == TRADE_CLOSED:
                raise BusinessError("ACQ.TRADE_HAS_CLOSE", "交易已关闭 The trade is closed")
            if trade.status != WAIT_BUYER_PAY:
                raise BusinessError("ACQ.TRADE_HAS_SUCCESS", "交易已支付 The trade is paid already")
            trade.status = TRADE_SUCCESS
            trade.gmt_payment = times.text(times.now())
            self._notify(trade, {})
            self._save()
            return copy.deepcopy(trade)

    # The merchant's side: the open API.

    def find(self, out_trade_no: str | None, trade_no: str | None) -> Trade:
        with self._lock:
            return copy.deepcopy(self._find(out_trade_no, trade_no))

    def close(self, out_trade_no: str | None, trade_no: str | None) -> Trade:
        """WAIT_BUYER_PAY becomes TRADE_CLOSED. A trade nobody opened is unknown, and stays so:
        Alipay does not remember the number, so a buyer may still open and pay it afterwards."""
        with self._lock:
            trade = self._find(out_trade_no, trade_no)
            if trade.status != WAIT_BUYER_PAY:
                raise BusinessError("ACQ.TRADE_STATUS_ERROR", f"交易状态不合法 The trade is {trade.status}")
            trade.status = TRADE_CLOSED
            trade.gmt_close = times.text(times.now())
            self._save()
            return copy.deepcopy(trade)

    def refund(
        self,
        out_trade_no: str | None,
        trade_no: str | None,
        refund_amount: Decimal,
        out_request_no: str | None,
        reason: str,
    ) -> tuple[Trade, Refund, bool]:
        """Refund `refund_amount` of a paid trade, once per `out_request_no` (the out_trade_no when
        not given, as Alipay has it): the same request again answers the refund made (the bool,
        "funds moved", is then False). Refunding all that remains closes the trade. Each refund
        owes a notify."""
        with self._lock:
            trade = self._find(out_trade_no, trade_no)
            requested = refund_amount
            out_request_no = out_request_no or trade.out_trade_no
            for refund in trade.refunds:
                if refund.out_request_no == out_request_no:
                    if amount(refund.refund_amount) != requested:
                        raise BusinessError(
                            "ACQ.REFUND_AMT_NOT_EQUAL_TOTAL",
                            "退款金额与该退款请求号的不一致 The amount differs from this out_request_no's refund",
                        )
                    return copy.deepcopy(trade), copy.deepcopy(refund), False
            if trade.status != TRADE_SUCCESS:
                raise BusinessError("ACQ.TRADE_STATUS_ERROR", f"交易状态不合法 The trade is {trade.status}")
            remaining = amount(trade.total_amount) - trade.refunded
            if requested <= 0:
                raise BusinessError("ACQ.INVALID_PARAMETER", "退款金额须大于0 refund_amount must be over 0")
            if requested > remaining:
                raise BusinessError("ACQ.REFUND_FEE_ERROR", f"退款金额超限 Only {yuan(remaining)} is left to refund")
            refund = Refund(
                out_request_no=out_request_no,
                refund_amount=yuan(requested),
                refund_reason=reason,
                gmt_refund=times.text(times.now()),
                refund_fee=yuan(trade.refunded + requested),
            )
            trade.refunds.append(refund)
            if requested == remaining:
                trade.status = TRADE_CLOSED
                trade.gmt_close = refund.gmt_refund
            self._notify(
                trade,
                {
                    "refund_fee": refund.refund_fee,
                    "gmt_refund": refund.gmt_refund,
                    "out_biz_no": refund.out_request_no,
                    "gmt_close": trade.gmt_close or "",
                },
            )
            self._save()
            return copy.deepcopy(trade), copy.deepcopy(refund), True

    def completed_on(self, day: date) -> list[Trade]:
        """Every trade paid or refunded on `day` (Beijing time), for that day's bill."""
        with self._lock:
            found = []
            for trade in self._trades.values():
                moments = [trade.gmt_payment] + [refund.gmt_refund for refund in trade.refunds]
                if any(moment and times.day(moment) == day for moment in moments):
                    found.append(copy.deepcopy(trade))
            return found

    # The notifications.

    def notification(self, notify_id: str) -> Notification | None:
        with self._lock:
            for trade in self._trades.values():
                for notification in trade.notifications:
                    if notification.notify_id == notify_id:
                        return copy.deepcopy(notification)
            return None

    def latest_notification(self, out_trade_no: str) -> Notification | None:
        with self._lock:
            trade = self._trades.get(out_trade_no)
            if trade is None or not trade.notifications:
                return None
            return copy.deepcopy(trade.notifications[-1])

    def record(self, notify_id: str, delivery: Delivery, started: float) -> Notification | None:
        """Add an attempt's outcome; None if the notification is gone (the data was cleared)."""
        with self._lock:
            for trade in self._trades.values():
                for notification in trade.notifications:
                    if notification.notify_id == notify_id:
                        if delivery.scheduled and notification.first_attempt is None:
                            notification.first_attempt = started
                        notification.deliveries.append(delivery)
                        notification.delivered = notification.delivered or delivery.delivered
                        self._save()
                        return copy.deepcopy(notification)
            return None

    def undelivered(self) -> list[Notification]:
        with self._lock:
            return [
                copy.deepcopy(notification)
                for trade in self._trades.values()
                for notification in trade.notifications
                if not notification.delivered
            ]

    # The whole.

    def snapshot(self) -> list[dict]:
        """Every trade as JSON-ready data, time_expire applied."""
        with self._lock:
            for trade in self._trades.values():
                self._expire(trade)
            return [asdict(trade) for trade in self._trades.values()]

    def clear(self) -> None:
        with self._lock:
            self._trades.clear()
            self._save()

    # Inside the lock.

    def _find(self, out_trade_no: str | None, trade_no: str | None) -> Trade:
        """The trade by trade_no if given (Alipay prefers it), else by out_trade_no, expiry applied."""
        if trade_no:
            trade = next((trade for trade in self._trades.values() if trade.trade_no == trade_no), None)
        else:
            trade = self._trades.get(out_trade_no or "")
        if trade is None or (trade_no and out_trade_no and trade.out_trade_no != out_trade_no):
            raise BusinessError("ACQ.TRADE_NOT_EXIST", "交易不存在 No such trade")
        self._expire(trade)
        return trade

    def _expire(self, trade: Trade) -> None:
        # Alipay closes an unpaid trade at its time_expire; reading it late shows the same.
        if trade.status == WAIT_BUYER_PAY and trade.time_expire and times.now() >= times.parse(trade.time_expire):
            trade.status = TRADE_CLOSED
            trade.gmt_close = trade.time_expire
            self._save()

    def _trade_no(self, created: datetime) -> str:
        # 28 digits as Alipay's: the date, a channel code, then a serial.
        while True:
            trade_no = f"{created:%Y%m%d}22001{secrets.randbelow(10**15):015d}"
            if all(trade.trade_no != trade_no for trade in self._trades.values()):
                return trade_no

    def _notify(self, trade: Trade, extra: dict[str, str]) -> None:
        """Owe the merchant a notify of the trade as it now is, if it gave a notify_url."""
        if not trade.notify_url:
            return
        params = {
            "notify_type": "trade_status_sync",
            "app_id": self._app_id,
            "auth_app_id": self._app_id,
            "charset": "utf-8",
            "version": "1.0",
            "trade_no": trade.trade_no,
            "out_trade_no": trade.out_trade_no,
            "trade_status": trade.status,
            "total_amount": trade.total_amount,
            "receipt_amount": trade.total_amount,
            "buyer_pay_amount": trade.total_amount,
            "seller_id": self._seller_id,
            "buyer_id": BUYER_ID,
            "buyer_logon_id": BUYER_LOGON_ID,
            "gmt_create": trade.gmt_create,
            "gmt_payment": trade.gmt_payment or "",
            "subject": trade.subject,
            **extra,
        }
        notify_id = uuid.uuid4().hex
        notification = Notification(
            notify_id=notify_id,
            url=trade.notify_url,
            params={"notify_id": notify_id, **{name: value for name, value in params.items() if value}},
        )
        trade.notifications.append(notification)
        self._owed(notification.notify_id)

    def _save(self) -> None:
        self._dirty.set()

    def _writer(self) -> None:
        while not self._stopped:
            self._dirty.wait()
            time.sleep(SAVE_EVERY_S)
            self.flush()

    def shutdown(self) -> None:
        """Write what changed since the last write, and stop writing."""
        self._stopped = True
        self.flush()

    def flush(self) -> None:
        if self._path is None or not self._dirty.is_set():
            return
        with self._lock:
            self._dirty.clear()
            text = json.dumps(
                {"trades": [asdict(trade) for trade in self._trades.values()]}, ensure_ascii=False, indent=1
            )
        descriptor, temporary = tempfile.mkstemp(dir=self._path.parent, prefix=f".{self._path.name}.")
        with os.fdopen(descriptor, "w", encoding="utf-8") as file:
            file.write(text)
        os.replace(temporary, self._path)
