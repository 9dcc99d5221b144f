"""The fast path's detail copy: an anonymous detail poll, or the item page's sale state
(anyone's: it reads nothing of the visitor), answered Django's own last public answer to the
same request (seckill_site.http.public_answer), kept at most COPY_SECONDS and never past its
countdown. getDetails and the sale state only where no edge keeps them (settings.EDGE_PURGE_URLS
is empty)."""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Iterable

from django.conf import settings

from sales.sale_state.marks import SOLD_OUT_MARK_SECONDS
from seckill.fastpath.wsgi import django_answer, language_chosen, plain_id, request_id
from seckill_site.logs import REQUEST_ID_HEADER
from seckill_site.metrics import ThreadCounts
from seckill_site.redis import now as redis_now

# getDetails in any language's URL (seckill_site.shared.language_patterns).
_LANGUAGE_PREFIX = "|".join(re.escape(f"/{code}") for code, _name in settings.LANGUAGES)
DETAIL_PATHS = (
    re.compile(rf"^(?:{_LANGUAGE_PREFIX})?/goods/getDetails/([^/]+)$"),
    re.compile(r"^/api/v1/sales/([^/]+)$"),
    re.compile(r"^/seckill/saleState/([^/]+)$"),
)
# Of DETAIL_PATHS, those an edge keeps (so no copy here behind one), and the one whose answer is
# the same with a session (seckill.item.views.sale_state): a shopper's cookie does not pass it by.
_EDGE_KEPT = (0, 2)
_SALE_STATE = 2
_DETAIL_SAMPLES = ("/goods/getDetails/1", "/api/v1/sales/1", "/seckill/saleState/1")

# The sold-out mark's bound, as long as the answer's Cache-Control lets a CDN keep it.
COPY_SECONDS = SOLD_OUT_MARK_SECONDS
COPIES_MAX = 4096  # distinct questions kept (sale × language × host × Accept ...), then cleared


class _Copy:
    __slots__ = ("body", "headers", "rid_at", "status", "until", "view")

    def __init__(self, status: str, headers: list[tuple[str, str]], body: bytes, until: float, view: str) -> None:
        names = [name.lower() for name, _value in headers]
        self.rid_at = names.index(REQUEST_ID_HEADER.lower())
        self.status, self.headers, self.body, self.until, self.view = status, headers, body, until, view


class DetailCopy:
    """Answers a detail GET from its copy, or lets Django answer and keeps a public answer."""

    def __init__(self, app: Callable, counts: ThreadCounts) -> None:
        self.app, self.counts = app, counts
        self.session_cookie = settings.SESSION_COOKIE_NAME
        self.language_cookie = settings.LANGUAGE_COOKIE_NAME
        # Behind an edge (deploy/edge.vcl) the edge keeps getDetails and the sale state for their
        # second: a copy here too would let it keep one already a second old, two seconds stale.
        self.details_copied = not settings.EDGE_PURGE_URLS
        self._copies: dict[tuple, _Copy] = {}
        self._views: list[str | None] | None = None

    def __call__(self, environ: dict, start_response: Callable, started: float) -> Iterable[bytes] | None:
        if environ.get("REQUEST_METHOD") != "GET":
            return None
        path = environ.get("PATH_INFO", "")
        kind, match = next(((kind, m) for kind, p in enumerate(DETAIL_PATHS) if (m := p.match(path))), (0, None))
        if match is None:
            return None
        if plain_id(match.group(1)) is None or "HTTP_AUTHORIZATION" in environ:
            return None
        if kind in _EDGE_KEPT and not self.details_copied:
            return None
        cookie = environ.get("HTTP_COOKIE", "")
        if self.session_cookie in cookie and kind != _SALE_STATE:
            return None  # maybe a shopper's own answer (getDetails carries the user)
        chosen = language_chosen(cookie, self.language_cookie)
        # Everything of the request that Django's answer to it may depend on.
        key = (
            path,
            environ.get("QUERY_STRING", ""),
            chosen,
            environ.get("HTTP_ACCEPT_LANGUAGE", ""),
            environ.get("HTTP_ACCEPT", ""),
            environ.get("HTTP_HOST", ""),
            environ.get("wsgi.url_scheme", ""),
            environ.get("HTTP_X_FORWARDED_PROTO", ""),
            environ.get("HTTP_X_REQUESTED_WITH", ""),
        )
        copy = self._copies.get(key)
        if copy is not None and copy.until > time.monotonic():
            headers = list(copy.headers)
            headers[copy.rid_at] = (REQUEST_ID_HEADER, request_id(environ))
            start_response(copy.status, headers)
            self.counts.add((copy.view, "GET", copy.status[:3], None), copy.view, "GET", copy.status[:3],
                            time.perf_counter() - started)  # fmt: skip
            return [copy.body]
        view = self._view(kind)
        if view is None:
            return None
        return self._copied(environ, start_response, key, view)

    def _copied(self, environ: dict, start_response: Callable, key: tuple, view: str) -> Iterable[bytes]:
        """Django answers; a public answer (seckill_site.http.public_answer) is kept as it was sent."""
        result, sent = django_answer(self.app, environ, start_response)
        exact_until = getattr(result, "public_until", None)
        if exact_until is None or not sent or not sent[0][0].startswith("200 "):
            return result
        status, headers = sent[0]
        names = {name.lower() for name, _value in headers}
        if "set-cookie" in names or REQUEST_ID_HEADER.lower() not in names:
            return result
        now = time.monotonic()
        until = now + min(COPY_SECONDS, exact_until - redis_now())
        if until > now:
            if len(self._copies) >= COPIES_MAX:
                self._copies.clear()
            self._copies[key] = _Copy(status, list(headers), result.content, until, view)
        return result

    def _view(self, kind: int) -> str | None:
        """The metrics label Django's path gives the detail (its URL route), found once."""
        if self._views is None:
            from django.urls import Resolver404, resolve

            views: list[str | None] = []
            for sample in _DETAIL_SAMPLES:
                try:
                    views.append(resolve(sample).route)
                except Resolver404:
                    views.append(None)  # not routed here: never answered
            self._views = views
        return self._views[kind]
