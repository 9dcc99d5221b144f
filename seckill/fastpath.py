"""`FastPath`: the answers that sell nothing, given below Django's handler with no network call.

It wraps the Django WSGI application (seckill_site/wsgi.py) and answers only:

- a buy for a sale this process knows is closed (seckill.closed.closed_refusal, not asking
  Redis): the same bytes as seckill.middleware.SoldOutMiddleware, from the same
  seckill.closed.refusal_response;
- an anonymous detail poll, or the item page's sale state (anyone's: it reads nothing of the
  visitor): Django's own last public answer to the same request
  (seckill_site.http.public_answer), kept at most COPY_SECONDS and never past its countdown
  (getDetails and the sale state only where no edge keeps them: settings.EDGE_PURGE_URLS is
  empty);
- a shopper's result poll carrying the ticket their buy left (seckill.tickets): the result, the
  user's auth epoch and their session read in one pipeline, answered with the headers of Django's
  own answer to a poll like it, when Redis holds the result and the session, and the epoch is
  the ticket's.

Anything else goes to Django untouched. The request id, the request metrics with Django's
labels and an aggregated log line every LOG_SECONDS are kept. Why, and what it saves:
docs/fast-answers.md.
"""

from __future__ import annotations

import io
import logging
import re
import threading
import time
from collections.abc import Callable, Iterable
from typing import Any

from django.conf import settings
from django.http import HttpResponse, parse_cookie

from sales import sale_state
from sales.sale_state.marks import SOLD_OUT_MARK_SECONDS
from seckill import tickets
from seckill.closed import REFUSAL_VIEWS, closed_refusal, refusal_response
from seckill.sale_id import API_BUY, PAGE_BUY, sale_id_plain, sale_id_read
from seckill_site.codes import EnvelopeCode
from seckill_site.http import ok
from seckill_site.locale import language_for
from seckill_site.logs import REQUEST_ID_HEADER, REQUEST_ID_META, request_id_for
from seckill_site.metrics import ThreadCounts, fast_counts
from seckill_site.redis import REDIS_FAILURES
from seckill_site.redis import now as redis_now
from seckill_site.redis import text as redis_text
from users import keys as user_keys
from users.sessions import session_stored_key

__all__ = ["FastPath"]

logger = logging.getLogger("seckill.request")

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

# A buy form is `goodsId=<id>` and maybe a csrf token; Django reads anything larger its own way.
FORM_BYTES_MAX = 1024
FORM = "application/x-www-form-urlencoded"
# positive_int's plain form only; its other spellings (spaces, signs, leading zeros) go to Django.
_ID = re.compile(r"[1-9][0-9]{0,17}")

# The body of the poll's view (seckill_site.http.ok) for one whole-number result.
_POLL_BODY = re.compile(rb'\{"code": 0, "msg": "success", "data": (-?[0-9]{1,19})\}')
# The same body written directly: a poll is learnt only where Django's answer is these bytes.
_POLL_BODY_FORMAT = b'{"code": 0, "msg": "success", "data": %d}'


def _id(text: str) -> int | None:
    return int(text) if _ID.fullmatch(text) else None


# The sold-out mark's bound, as long as the answer's Cache-Control lets a CDN keep it.
COPY_SECONDS = SOLD_OUT_MARK_SECONDS
COPIES_MAX = 4096  # distinct questions kept (sale × language × host × Accept ...), then cleared
LOG_SECONDS = 10.0


def _wsgi_status(response: HttpResponse) -> str:
    return f"{response.status_code} {response.reason_phrase}"  # as django.core.handlers.wsgi


class _Copy:
    __slots__ = ("body", "headers", "rid_at", "status", "until", "view")

    def __init__(self, status: str, headers: list[tuple[str, str]], body: bytes, until: float, view: str) -> None:
        names = [name.lower() for name, _value in headers]
        self.rid_at = names.index(REQUEST_ID_HEADER.lower())
        self.status, self.headers, self.body, self.until, self.view = status, headers, body, until, view


class _Head:
    """The status and headers of Django's answer to a result poll, for any result's body."""

    __slots__ = ("headers", "length_at", "rid_at", "status", "view")

    def __init__(self, status: str, headers: list[tuple[str, str]], view: str) -> None:
        names = [name.lower() for name, _value in headers]
        self.rid_at = names.index(REQUEST_ID_HEADER.lower())
        self.length_at = names.index("content-length") if "content-length" in names else None
        self.status, self.headers, self.view = status, headers, view


class FastPath:
    """WSGI middleware below Django's handler (seckill_site/wsgi.py)."""

    def __init__(self, app: Callable, *, counts: ThreadCounts | None = None) -> None:
        self.app = app
        self.limit = settings.SECKILL_MAX_REQUEST_BYTES
        self.session_cookie = settings.SESSION_COOKIE_NAME
        self.language_cookie = settings.LANGUAGE_COOKIE_NAME
        self.ticket_cookie = settings.SECKILL_RESULT_TICKET_COOKIE
        self.poll_path = settings.SECKILL_RESULT_TICKET_PATH
        # Behind an edge (deploy/edge.vcl) the edge keeps getDetails and the sale state for their
        # second: a copy here too would let it keep one already a second old, two seconds stale.
        self.details_copied = not settings.EDGE_PURGE_URLS
        self.counts = counts or fast_counts
        self.counts.fold_listeners.append(self._logged)
        self.counts.tick_listeners.append(self._log_if_due)
        self._refusals: dict[tuple[EnvelopeCode, str], tuple[str, list[tuple[str, str]], bytes]] = {}
        self._copies: dict[tuple, _Copy] = {}
        self._detail_views: list[str | None] | None = None
        self._poll_heads: dict[tuple, _Head] = {}
        self._summary: dict[tuple[str, str], int] = {}
        self._summary_lock = threading.Lock()  # the folder thread's, once a second (tests fold too)
        self._summary_since = time.monotonic()

    def __call__(self, environ: dict, start_response: Callable) -> Iterable[bytes]:
        started = time.perf_counter()
        method = environ.get("REQUEST_METHOD")
        path = environ.get("PATH_INFO", "")
        answered: Iterable[bytes] | None
        try:
            if method == "POST":
                answered = self._buy(environ, path, start_response, started)
            elif method == "GET" and path == self.poll_path:
                answered = self._poll(environ, start_response, started)
            elif method == "GET":
                answered = self._detail(environ, path, start_response, started)
            else:
                answered = None
        except REDIS_FAILURES:  # the clock's refresh failed: Django answers the outage its way
            answered = None
        if answered is not None:
            return answered
        return self.app(environ, start_response)

    def _buy(self, environ: dict, path: str, start_response: Callable, started: float) -> list[bytes] | None:
        page = PAGE_BUY.match(path)
        api = None if page else API_BUY.match(path)
        if page is None and api is None:
            return None
        length = self._length(environ)
        if length is None or length > self.limit:
            return None  # Django refuses it (413) or reads it its way
        sale_id = self._form_sale_id(environ, length) if page else _id(api.group(1))  # type: ignore[union-attr]
        if sale_id is None:
            return None
        refusal = closed_refusal(sale_id, ask=False)
        if refusal is None:
            return None
        code = refusal.code
        language = self._language(environ)
        answer = self._refusals.get((code, language))
        if answer is None:
            response = refusal_response(code, language)
            answer = self._refusals[(code, language)] = (
                _wsgi_status(response),
                list(response.items()),
                response.content,
            )
        status, headers, body = answer
        start_response(status, [*headers, (REQUEST_ID_HEADER, self._request_id(environ))])
        self.counts.add((REFUSAL_VIEWS[refusal], "POST", status[:3], code), REFUSAL_VIEWS[refusal], "POST", status[:3],
                        time.perf_counter() - started)  # fmt: skip
        return [body]

    @staticmethod
    def _length(environ: dict) -> int | None:
        raw = environ.get("CONTENT_LENGTH") or "0"
        return int(raw) if raw.isdigit() else None  # anything odd: Django decides

    @staticmethod
    def _form_sale_id(environ: dict, length: int) -> int | None:
        """The form's sale id as request.POST reads it, or None for Django to read; the body is put back."""
        content_type = environ.get("CONTENT_TYPE", "")
        mime, _sep, params = content_type.partition(";")
        if mime.strip().lower() != FORM or (params.strip() and params.strip().lower() != "charset=utf-8"):
            return None
        if not 0 < length <= FORM_BYTES_MAX:
            return None
        body = environ["wsgi.input"].read(length)
        environ["wsgi.input"] = io.BytesIO(body)
        if len(body) != length:
            return None
        sale_id = sale_id_plain(body)
        if sale_id is not None:
            return sale_id
        # Django's own parser for anything else (a csrf token beside it, repeated fields).
        from django.http import QueryDict

        try:
            return sale_id_read(QueryDict(body, encoding="utf-8"))
        except Exception:  # whatever Django would say about a broken form, it says it itself
            return None

    def _language(self, environ: dict) -> str:
        """The language Django would pick (seckill_site.locale.language_for)."""
        return language_for(
            self._language_chosen(environ.get("HTTP_COOKIE", "")), environ.get("HTTP_ACCEPT_LANGUAGE", "")
        )

    def _language_chosen(self, cookie: str) -> str | None:
        """The language cookie's value, parsing the header only when it names the cookie."""
        return parse_cookie(cookie).get(self.language_cookie) if self.language_cookie in cookie else None

    @staticmethod
    def _request_id(environ: dict) -> str:
        return request_id_for(environ.get(REQUEST_ID_META, ""))

    def _detail(self, environ: dict, path: str, start_response: Callable, started: float) -> Iterable[bytes] | None:
        kind, match = next(((kind, m) for kind, p in enumerate(DETAIL_PATHS) if (m := p.match(path))), (0, None))
        if match is None:
            return None
        if _id(match.group(1)) is None or "HTTP_AUTHORIZATION" in environ:
            return None
        if kind in _EDGE_KEPT and not self.details_copied:
            return None
        cookie = environ.get("HTTP_COOKIE", "")
        if self.session_cookie in cookie and kind != _SALE_STATE:
            return None  # maybe a shopper's own answer (getDetails carries the user)
        chosen = self._language_chosen(cookie)
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
            headers[copy.rid_at] = (REQUEST_ID_HEADER, self._request_id(environ))
            start_response(copy.status, headers)
            self.counts.add((copy.view, "GET", copy.status[:3], None), copy.view, "GET", copy.status[:3],
                            time.perf_counter() - started)  # fmt: skip
            return [copy.body]
        view = self._detail_view(kind)
        if view is None:
            return None
        return self._detail_copied(environ, start_response, key, view)

    def _detail_copied(self, environ: dict, start_response: Callable, key: tuple, view: str) -> Iterable[bytes]:
        """Django answers; a public answer (seckill_site.http.public_answer) is kept as it was sent."""
        sent: list[tuple[str, list[tuple[str, str]]]] = []

        def start_response_kept(status: str, headers: list[tuple[str, str]], exc_info: Any = None) -> Any:
            sent.append((status, headers))
            return start_response(status, headers) if exc_info is None else start_response(status, headers, exc_info)

        result = self.app(environ, start_response_kept)
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

    def _poll(self, environ: dict, start_response: Callable, started: float) -> Iterable[bytes] | None:
        """A result poll whose ticket holds (seckill.tickets), answered from Redis as Django would:
        the ticket's sale is the one asked for, Redis holds the result, the session still exists
        (a logout, a flush or an expiry deleted it) and the user's auth epoch is still the
        ticket's (a revocation changed it), read in one pipeline. The headers are those of
        Django's own answer to a poll like it, learnt by letting the first one through."""
        cookie = environ.get("HTTP_COOKIE", "")
        if self.ticket_cookie not in cookie:
            return None
        # The query exactly `goodsId=<id>`, as the view reads it; anything else goes to Django.
        sale_id = sale_id_plain(environ.get("QUERY_STRING", ""))
        if sale_id is None:
            return None
        cookies = parse_cookie(cookie)
        ticket = tickets.ticket_read(cookies.get(self.ticket_cookie), session_key=cookies.get(self.session_cookie))
        if ticket is None or ticket.sale_id != sale_id:
            return None
        language = language_for(cookies.get(self.language_cookie), environ.get("HTTP_ACCEPT_LANGUAGE", ""))
        # What Django's headers depend on besides the result: the language, the scheme (HSTS; an
        # https redirect is a 301, never learnt) and the Host (one it does not serve is a 400).
        key = (language, environ.get("HTTP_HOST", ""), environ.get("wsgi.url_scheme", ""),
               environ.get("HTTP_X_FORWARDED_PROTO", ""))  # fmt: skip
        head = self._poll_heads.get(key)
        if head is None:
            return self._poll_learnt(environ, start_response, key)
        value, (epoch, session) = sale_state.result_beside(
            sale_id=ticket.sale_id,
            user_id=ticket.user_id,
            others=(user_keys.auth_epoch(ticket.user_id), session_stored_key(cookies[self.session_cookie])),
        )
        if value is None or session is None or epoch is None or redis_text(epoch) != ticket.epoch:
            return None  # only the database knows, the session ended or the credentials were revoked
        body = _POLL_BODY_FORMAT % value
        headers = list(head.headers)
        headers[head.rid_at] = (REQUEST_ID_HEADER, self._request_id(environ))
        if head.length_at is not None:
            headers[head.length_at] = (headers[head.length_at][0], str(len(body)))
        start_response(head.status, headers)
        self.counts.add((head.view, "GET", head.status[:3], None), head.view, "GET", head.status[:3],
                        time.perf_counter() - started)  # fmt: skip
        return [body]

    def _poll_learnt(self, environ: dict, start_response: Callable, key: tuple) -> Iterable[bytes]:
        """Django answers; the status and headers of a plain result (no cookie set, the body
        seckill_site.http.ok gives for a whole number) are kept for `key`."""
        sent: list[tuple[str, list[tuple[str, str]]]] = []

        def start_response_kept(status: str, headers: list[tuple[str, str]], exc_info: Any = None) -> Any:
            sent.append((status, headers))
            return start_response(status, headers) if exc_info is None else start_response(status, headers, exc_info)

        result = self.app(environ, start_response_kept)
        if not sent or sent[0][0] != "200 OK":
            return result
        status, headers = sent[0]
        names = {name.lower() for name, _value in headers}
        if "set-cookie" in names or REQUEST_ID_HEADER.lower() not in names:
            return result
        body = getattr(result, "content", None)
        match = _POLL_BODY.fullmatch(body) if isinstance(body, bytes) else None
        if match is None or not ok(int(match.group(1))).content == _POLL_BODY_FORMAT % int(match.group(1)) == body:
            return result
        from django.urls import resolve

        if len(self._poll_heads) >= COPIES_MAX:
            self._poll_heads.clear()
        self._poll_heads[key] = _Head(status, list(headers), resolve(self.poll_path).route)
        return result

    def _detail_view(self, kind: int) -> str | None:
        """The metrics label Django's path gives the detail (its URL route), found once."""
        if self._detail_views is None:
            from django.urls import Resolver404, resolve

            views: list[str | None] = []
            for sample in _DETAIL_SAMPLES:
                try:
                    views.append(resolve(sample).route)
                except Resolver404:
                    views.append(None)  # not routed here: never answered
            self._detail_views = views
        return self._detail_views[kind]

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
