"""The async notify: Alipay POSTs each event of a trade to the merchant's notify_url until the
merchant answers `success`, on Alipay's schedule.

An attempt is a form POST (utf-8) of the event's parameters with a fresh `notify_time` and
signature; `notify_id` stays the same across attempts. It is delivered when the answer is HTTP
200 with the body `success` (whitespace around it ignored); anything else, a timeout or a refused
connection is retried 4m, 10m, 10m, 1h, 2h, 6h and 15h later, each times `scale`: eight attempts
over about 25 hours at scale 1.

Each attempt runs in a thread of its own, so a slow merchant delays no other notify. While held
(`hold(True)`, the "notify lost" fault) attempts that fall due wait, and go out when released.
"""

from __future__ import annotations

import heapq
import itertools
import logging
import threading
import time
import urllib.error
import urllib.parse
import urllib.request

from Cryptodome.PublicKey import RSA

from tools.alipay_gateway import signing, times
from tools.alipay_gateway.trades import Delivery, Notification, Store

# Alipay's intervals after each failed attempt, in seconds.
RETRY_INTERVALS_S = (4 * 60, 10 * 60, 10 * 60, 60 * 60, 2 * 60 * 60, 6 * 60 * 60, 15 * 60 * 60)
# When each scheduled attempt is due, counted from the first: eight in all.
ATTEMPT_OFFSETS_S = tuple(itertools.accumulate(RETRY_INTERVALS_S, initial=0))
# How long an attempt waits for the merchant's answer, and how much of it is kept.
ANSWER_TIMEOUT_S = 10
ANSWER_KEPT_CHARS = 200
log = logging.getLogger("alipay_gateway.notify")
# Notifies go straight to the merchant, never through a proxy from the environment: the merchant
# is on this machine or its network, as Alipay's own callers reach it.
opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))


class Notifier:
    """Sends the notifications `store` owes, signed with `key` (Alipay's private key)."""

    def __init__(self, store: Store, key: RSA.RsaKey, scale: float) -> None:
        self._store = store
        self._key = key
        self._scale = scale
        self._due: list[tuple[float, int, str]] = []  # (epoch seconds, tie-break, notify_id), a heap
        self._order = itertools.count()
        self._wake = threading.Condition()
        self._held = False
        self._stopping = False
        self._thread = threading.Thread(target=self._run, name="alipay-notify", daemon=True)

    def start(self) -> None:
        """Start sending, first resuming what a previous run left undelivered."""
        for notification in self._store.undelivered():
            due = self._next_due(notification)
            if due is not None:
                self._schedule(notification.notify_id, due)
        self._thread.start()

    def stop(self) -> None:
        with self._wake:
            self._stopping = True
            self._wake.notify_all()
        self._thread.join(timeout=5)

    def owe(self, notify_id: str) -> None:
        """A new event: its first attempt is due now."""
        self._schedule(notify_id, time.time())

    def hold(self, held: bool) -> None:
        with self._wake:
            self._held = held
            self._wake.notify_all()

    @property
    def held(self) -> bool:
        return self._held

    def send_now(self, notify_id: str) -> Delivery | None:
        """One attempt now, off the schedule and even while held, answered when it is done; None if
        there is no such notification. Delivered, it ends the schedule too."""
        return self._attempt(notify_id, scheduled=False)

    def _schedule(self, notify_id: str, due: float) -> None:
        with self._wake:
            heapq.heappush(self._due, (due, next(self._order), notify_id))
            self._wake.notify_all()

    def _run(self) -> None:
        while True:
            with self._wake:
                while not self._stopping and (self._held or not self._due or self._due[0][0] > time.time()):
                    timeout = None if self._held or not self._due else self._due[0][0] - time.time()
                    self._wake.wait(timeout)
                if self._stopping:
                    return
                _, _, notify_id = heapq.heappop(self._due)
            # A daemon: stopping the gateway does not wait on a slow merchant's answer.
            threading.Thread(target=self._attempt, args=(notify_id, True), name="alipay-notify", daemon=True).start()

    def _attempt(self, notify_id: str, scheduled: bool) -> Delivery | None:
        notification = self._store.notification(notify_id)
        if notification is None or (scheduled and notification.delivered):
            return None
        started = time.time()
        params = signing.signed_callback({**notification.params, "notify_time": times.text(times.now())}, self._key)
        status, answer = post(notification.url, params)
        delivered = status == 200 and answer.strip() == "success"
        delivery = Delivery(
            at=times.text(times.now()), scheduled=scheduled, status=status, answer=answer, delivered=delivered
        )
        log.info(
            "notify %s of %s, attempt %d%s: %s %r",
            notification.params["trade_status"],
            notification.params["out_trade_no"],
            len(notification.deliveries) + 1,
            "" if scheduled else " (by hand)",
            status,
            answer,
        )
        updated = self._store.record(notify_id, delivery, started)
        if scheduled and updated is not None:
            due = self._next_due(updated)
            if due is not None:
                self._schedule(notify_id, due)
        return delivery

    def _next_due(self, notification: Notification) -> float | None:
        """When the next scheduled attempt is due; None once delivered or all eight were made."""
        attempts = notification.scheduled_attempts
        if notification.delivered or attempts >= len(ATTEMPT_OFFSETS_S):
            return None
        if notification.first_attempt is None:
            return time.time()
        return notification.first_attempt + ATTEMPT_OFFSETS_S[attempts] * self._scale


def post(url: str, params: dict[str, str]) -> tuple[int | None, str]:
    """POST `params` as a utf-8 form; the HTTP status (None when there was no answer) and the body,
    or what went wrong, cut to ANSWER_KEPT_CHARS."""
    request = urllib.request.Request(
        url,
        data=urllib.parse.urlencode(params).encode("utf-8"),
        headers={"Content-Type": "application/x-www-form-urlencoded; charset=utf-8"},
        method="POST",
    )
    try:
        with opener.open(request, timeout=ANSWER_TIMEOUT_S) as response:
            return response.status, _text(response.read(ANSWER_KEPT_CHARS * 4))
    except urllib.error.HTTPError as error:
        return error.code, _text(error.read(ANSWER_KEPT_CHARS * 4))
    except (OSError, ValueError) as error:
        # Refused, reset, timed out, or a notify_url that is no URL: no answer, retried all the same.
        return None, str(error)[:ANSWER_KEPT_CHARS]


def _text(body: bytes) -> str:
    return body.decode("utf-8", errors="replace")[:ANSWER_KEPT_CHARS]
