"""Tell the edge caches (deploy/edge.vcl, docs/edge.md) which of everybody's pages changed.

A shared answer names its surrogate keys in an `xkey` header (`surrogate_keys`); a service
that changes what such a page shows calls `edge_purge("sale-5", "sales")` after its commit.
The call never blocks or raises: it adds the keys to a set, and one daemon thread per process
sends them, at most once per INTERVAL, as one `PURGE` with `xkey-purge: <keys>` to each URL of
settings.EDGE_PURGE_URLS. With none (the default) it does nothing and starts no thread. A
failed purge is logged and counted, never retried: the page then lives out its s-maxage.
"""

from __future__ import annotations

import atexit
import logging
import os
import re
import threading
import time
from collections.abc import Iterable
from http.client import HTTPException
from urllib.request import ProxyHandler, Request, build_opener

from django.conf import settings
from django.http import HttpResponseBase
from prometheus_client import Counter

logger = logging.getLogger(__name__)

EDGE_PURGES = Counter(
    "seckill_edge_purges_total", "PURGE requests sent to the edge caches, by outcome (sent, failed)", ["outcome"]
)

# Seconds between two sends: the keys of a burst of changes go out together.
INTERVAL = 0.15
# Seconds after which each purge is sent once more: a page the edge was fetching from Django
# while the change committed reaches the edge after the first purge, and the second drops it.
REPEAT_SECONDS = 2.0
# Seconds a PURGE may take; the edges are near, and a late one holds up the next send only.
TIMEOUT = 1.0
# Keys per PURGE stay well below Varnish's 8 KiB header limit (http_req_hdr_len).
HEADER_BYTES = 4000
# What a key may hold: xkey splits on spaces and commas, and a header holds no line breaks.
KEY = re.compile(r"[A-Za-z0-9_.:/-]+")

# The edges sit on the shop's own network: a proxy in the environment is not for them.
_opener = build_opener(ProxyHandler({}))


def surrogate_keys(response: HttpResponseBase, *keys: str) -> HttpResponseBase:
    """Add `keys` to the response's `xkey` header (the edge's tags for purging it), once each."""
    have = response.headers.get("xkey", "").split()
    response.headers["xkey"] = " ".join(dict.fromkeys([*have, *keys]))
    return response


def _chunks(keys: Iterable[str]) -> list[str]:
    """Space-separated keys, as few headers as fit HEADER_BYTES each."""
    chunks: list[str] = []
    line = ""
    for key in sorted(keys):
        if line and len(line) + 1 + len(key) > HEADER_BYTES:
            chunks.append(line)
            line = ""
        line = f"{line} {key}" if line else key
    return [*chunks, line] if line else chunks


class _Sender:
    """The keys waiting to be purged and the thread that sends them."""

    def __init__(self) -> None:
        self._reset()
        # A forked child (a Celery or web worker) has the set and lock but not the thread.
        os.register_at_fork(after_in_child=self._reset)

    def _reset(self) -> None:
        self._changed = threading.Condition()
        self._pending: set[str] = set()
        self._again: dict[str, float] = {}  # key -> when (monotonic) it is sent once more
        self._sending = False
        self._hurry = 0  # callers of flush() waiting: skip the pause between sends
        self._thread: threading.Thread | None = None
        self._failing: set[str] = set()  # URLs whose last PURGE failed: log once per outage

    def add(self, keys: Iterable[str]) -> None:
        with self._changed:
            self._pending.update(keys)
            if self._thread is None:
                self._thread = threading.Thread(target=self._send_forever, name="edge-purge", daemon=True)
                self._thread.start()
                atexit.register(self.flush, TIMEOUT)
            self._changed.notify_all()

    def flush(self, timeout: float) -> bool:
        """Send what waits now; True once it is sent (or failed), False if `timeout` passed first."""
        with self._changed:
            if self._thread is None:
                return not self._pending
            self._hurry += 1
            self._changed.notify_all()
            try:
                return self._changed.wait_for(lambda: not self._pending and not self._sending, timeout)
            finally:
                self._hurry -= 1

    def _send_forever(self) -> None:
        while True:
            with self._changed:
                due = self._wait_for_keys()
                first, self._pending = self._pending, set()
                self._sending = True
            try:
                self._send(first | due)
            except Exception:  # the thread must outlive any mistake  # noqa: BLE001
                logger.exception("edge: sending a purge failed")
            with self._changed:
                again = time.monotonic() + REPEAT_SECONDS
                self._again.update(dict.fromkeys(first, again))
                self._sending = False
                self._changed.notify_all()
                self._changed.wait_for(lambda: self._hurry, INTERVAL)

    def forget(self) -> None:
        """Drop the keys waiting and the repeats due (tests: an edge of theirs stops answering)."""
        with self._changed:
            self._pending.clear()
            self._again.clear()

    def _wait_for_keys(self) -> set[str]:
        """Wait (holding the condition) until keys are pending or a repeat is due; the due ones."""
        while True:
            now = time.monotonic()
            due = {key for key, at in self._again.items() if at <= now}
            if self._pending or due:
                for key in due:
                    del self._again[key]
                return due
            self._changed.wait(min(self._again.values()) - now if self._again else None)

    def _send(self, keys: set[str]) -> None:
        for url in settings.EDGE_PURGE_URLS:
            for line in _chunks(keys):
                try:
                    with _opener.open(Request(url, method="PURGE", headers={"xkey-purge": line}), timeout=TIMEOUT):
                        pass
                except (OSError, ValueError, HTTPException) as error:  # refused, timed out, an error status, a bad URL
                    EDGE_PURGES.labels("failed").inc()
                    if url not in self._failing:
                        self._failing.add(url)
                        logger.warning("edge: PURGE %s failed (%s); pages there live out their TTL", url, error)
                    logger.debug("edge: PURGE %s failed for %s: %s", url, line, error)
                    break
                EDGE_PURGES.labels("sent").inc()
                if url in self._failing:
                    self._failing.discard(url)
                    logger.warning("edge: PURGE %s works again", url)


_sender = _Sender()


def edge_purge(*keys: str) -> None:
    """Have every edge drop the pages tagged with any of `keys`, within about INTERVAL. Returns
    at once and never raises; does nothing when settings.EDGE_PURGE_URLS is empty."""
    try:
        if not settings.EDGE_PURGE_URLS:
            return
        good = [key for key in keys if KEY.fullmatch(key)]
        if len(good) < len(keys):
            logger.warning("edge: keys not purged, not of %s: %r", KEY.pattern, sorted(set(keys) - set(good)))
        if good:
            _sender.add(good)
    except Exception:  # a purge is never worth a caller's failure  # noqa: BLE001
        logger.exception("edge: could not queue a purge of %r", keys)


def edge_purge_forget() -> None:
    """Drop the keys waiting and the repeats due (tests, whose edges come and go)."""
    _sender.forget()


def edge_purge_flush(timeout: float = 5.0) -> bool:
    """Send the waiting keys now and wait until they are sent, at most `timeout` seconds (tests;
    at exit). True when nothing is left waiting."""
    return _sender.flush(timeout)
