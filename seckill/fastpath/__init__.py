"""`FastPath`: the answers that sell nothing, given below Django's handler with no network call
but Redis's.

It wraps the Django WSGI application (seckill_site/wsgi.py wires it from the WSGI_MIDDLEWARE
setting) and asks the answerers of the request's method, each its own module:

- POST: refusal.ClosedSaleRefusal, a buy for a sale this process knows is closed
  (sales.sale_state.refusal_known, the rule every layer asks);
- GET: detail.DetailCopy, Django's own last public answer to an anonymous detail poll or the
  item page's sale state; then poll.ResultPoll, a shopper's result poll carrying the ticket
  their buy left (seckill.tickets); then waiting.WaitingStatus, a waiting room's status poll
  carrying the shopper's wait ticket; then waitlist.WaitingListStatus, a draw's waiting list
  polled with the same ticket;
- POST, and GET for the captcha and the path: waiting.PassRequired, a sale's buy, captcha or
  path asked without the pass its waiting room requires.

The first that answers does; anything none answers goes to Django untouched, so a buy passes
through one answerer and a poll through two. The request id,
the request metrics with Django's labels and an aggregated log line every LOG_SECONDS are kept.
Why, and what it saves: docs/fast-answers.md.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Iterable

from seckill.fastpath.detail import DetailCopy
from seckill.fastpath.poll import ResultPoll
from seckill.fastpath.refusal import ClosedSaleRefusal
from seckill.fastpath.waiting import PassRequired, WaitingStatus
from seckill.fastpath.waitlist import WaitingListStatus
from seckill.fastpath.wsgi import Answerer
from seckill_site.metrics import ThreadCounts, fast_counts
from seckill_site.redis import REDIS_FAILURES

__all__ = ["FastPath"]

logger = logging.getLogger("seckill.request")

LOG_SECONDS = 10.0


class FastPath:
    """WSGI middleware below Django's handler (seckill_site/wsgi.py)."""

    def __init__(self, app: Callable, *, counts: ThreadCounts | None = None) -> None:
        self.app = app
        self.counts = counts or fast_counts
        self.counts.fold_listeners.append(self._logged)
        self.counts.tick_listeners.append(self._log_if_due)
        self.answerers: dict[str, tuple[Answerer, ...]] = {
            "POST": (ClosedSaleRefusal(self.counts), PassRequired(self.counts)),
            "GET": (
                DetailCopy(app, self.counts),
                ResultPoll(app, self.counts),
                WaitingStatus(app, self.counts),
                WaitingListStatus(app, self.counts),
                PassRequired(self.counts),
            ),
        }
        self._summary: dict[tuple[str, str], int] = {}
        self._summary_lock = threading.Lock()  # the folder thread's, once a second (tests fold too)
        self._summary_since = time.monotonic()

    def __call__(self, environ: dict, start_response: Callable) -> Iterable[bytes]:
        started = time.perf_counter()
        try:
            for answerer in self.answerers.get(environ.get("REQUEST_METHOD", ""), ()):
                answered = answerer(environ, start_response, started)
                if answered is not None:
                    return answered
        except REDIS_FAILURES:  # the clock's refresh failed: Django answers the outage its way
            pass
        return self.app(environ, start_response)

    def _logged(self, key: tuple, count: int) -> None:
        """A fold listener: the folded counts go into the summary."""
        view, _method, status = key[0], key[1], key[2]
        with self._summary_lock:
            self._summary[(view, status)] = self._summary.get((view, status), 0) + count

    def _log_if_due(self) -> None:
        """A tick listener (also after traffic stops): logs the summary every LOG_SECONDS."""
        with self._summary_lock:
            now = time.monotonic()
            if not self._summary:
                self._summary_since = now  # the next line covers answers from here on
                return
            if now - self._summary_since < LOG_SECONDS:
                return
            summary, self._summary = self._summary, {}
            seconds, self._summary_since = now - self._summary_since, now
        if logger.isEnabledFor(logging.INFO):
            answers = {f"{view} {status}": n for (view, status), n in sorted(summary.items())}
            logger.info("fast path: %d answers in %.0f s", sum(answers.values()), seconds,
                        extra={"fastpath_answers": answers, "seconds": round(seconds, 1)})  # fmt: skip
