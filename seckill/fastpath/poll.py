"""The fast path's result poll: a shopper's poll carrying the ticket their buy left
(seckill.tickets) is answered from Redis as Django would, when Redis holds the result and the
session, and the user's auth epoch is still the ticket's, all read in one pipeline. The headers
are those of Django's own answer to a poll like it, learnt by letting the first one through."""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Iterable

from django.conf import settings
from django.http import parse_cookie

from sales import sale_state
from seckill import tickets
from seckill.fastpath.wsgi import LearntHead, django_answer, request_id
from seckill.sale_id import sale_id_plain
from seckill_site.http import ok
from seckill_site.locale import language_for
from seckill_site.logs import REQUEST_ID_HEADER
from seckill_site.metrics import ThreadCounts
from seckill_site.redis import text as redis_text
from users import keys as user_keys
from users.sessions import session_stored_key

# The body of the poll's view (seckill_site.http.ok) for one whole-number result.
_POLL_BODY = re.compile(rb'\{"code": 0, "msg": "success", "data": (-?[0-9]{1,19})\}')
# The same body written directly: a poll is learnt only where Django's answer is these bytes.
_POLL_BODY_FORMAT = b'{"code": 0, "msg": "success", "data": %d}'
HEADS_MAX = 4096  # distinct (language, host, scheme) kept, then cleared


class ResultPoll:
    """Answers GET settings.SECKILL_RESULT_TICKET_PATH with a holding ticket; else None."""

    def __init__(self, app: Callable, counts: ThreadCounts) -> None:
        self.app, self.counts = app, counts
        self.path = settings.SECKILL_RESULT_TICKET_PATH
        self.session_cookie = settings.SESSION_COOKIE_NAME
        self.language_cookie = settings.LANGUAGE_COOKIE_NAME
        self.ticket_cookie = settings.SECKILL_RESULT_TICKET_COOKIE
        self._heads: dict[tuple, LearntHead] = {}

    def __call__(self, environ: dict, start_response: Callable, started: float) -> Iterable[bytes] | None:
        """The ticket's sale is the one asked for (the query exactly `goodsId=<id>`, anything
        else goes to Django), Redis holds the result, the session still exists (a logout, a
        flush or an expiry deleted it) and the user's auth epoch is still the ticket's (a
        revocation changed it)."""
        if environ.get("REQUEST_METHOD") != "GET" or environ.get("PATH_INFO", "") != self.path:
            return None
        cookie = environ.get("HTTP_COOKIE", "")
        if self.ticket_cookie not in cookie:
            return None
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
        head = self._heads.get(key)
        if head is None:
            return self._learnt(environ, start_response, key)
        value, (epoch, session) = sale_state.result_beside(
            sale_id=ticket.sale_id,
            user_id=ticket.user_id,
            others=(user_keys.auth_epoch(ticket.user_id), session_stored_key(cookies[self.session_cookie])),
        )
        if value is None or session is None or epoch is None or redis_text(epoch) != ticket.epoch:
            return None  # only the database knows, the session ended or the credentials were revoked
        body = _POLL_BODY_FORMAT % value
        start_response(head.status, head.headers_for(body, request_id(environ)))
        self.counts.add((head.view, "GET", head.status[:3], None), head.view, "GET", head.status[:3],
                        time.perf_counter() - started)  # fmt: skip
        return [body]

    def _learnt(self, environ: dict, start_response: Callable, key: tuple) -> Iterable[bytes]:
        """Django answers; the status and headers of a plain result (no cookie set, the body
        seckill_site.http.ok gives for a whole number) are kept for `key`."""
        result, sent = django_answer(self.app, environ, start_response)
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

        if len(self._heads) >= HEADS_MAX:
            self._heads.clear()
        self._heads[key] = LearntHead(status, list(headers), resolve(self.path).route)
        return result
