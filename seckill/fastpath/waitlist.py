"""A draw's waiting list below Django (docs/waiting-list.md): a shopper's poll of
`/seckill/waitingList/<sale>` carrying their wait ticket is answered from Redis
(seckill.waiting_list), one pipeline and no session load, so the entrants who were not drawn
never reach Django while they wait for a unit to come back."""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Iterable

from django.conf import settings
from django.http import parse_cookie

from seckill.fastpath.wsgi import LearntHead, django_answer, plain_id, request_id
from seckill.waiting_list import waiting_list_body, waiting_list_data
from seckill_site.locale import language_for
from seckill_site.logs import REQUEST_ID_HEADER
from seckill_site.metrics import ThreadCounts
from waitingroom.wait_ticket import wait_cookie, wait_read

LIST_PATH = re.compile(r"^/seckill/waitingList/([^/]+)$")
HEADS_MAX = 4096


class WaitingListStatus:
    """Answers GET /seckill/waitingList/<sale> with a holding wait ticket once Redis holds the
    list; else None. The headers are those of Django's own answer, learnt from the first."""

    def __init__(self, app: Callable, counts: ThreadCounts) -> None:
        self.app, self.counts = app, counts
        self.session_cookie = settings.SESSION_COOKIE_NAME
        self.language_cookie = settings.LANGUAGE_COOKIE_NAME
        self._heads: dict[tuple, LearntHead] = {}

    def __call__(self, environ: dict, start_response: Callable, started: float) -> Iterable[bytes] | None:
        if environ.get("REQUEST_METHOD") != "GET":
            return None
        match = LIST_PATH.match(environ.get("PATH_INFO", ""))
        if match is None or environ.get("QUERY_STRING"):
            return None
        sale_id = plain_id(match.group(1))
        cookie = environ.get("HTTP_COOKIE", "")
        if sale_id is None or wait_cookie(sale_id) not in cookie:
            return None
        cookies = parse_cookie(cookie)
        user_id = wait_read(
            cookies.get(wait_cookie(sale_id)), sale_id=sale_id, session_key=cookies.get(self.session_cookie)
        )
        if user_id is None:
            return None
        # What Django's headers depend on besides the body: as the result poll's (poll.py).
        language = language_for(cookies.get(self.language_cookie), environ.get("HTTP_ACCEPT_LANGUAGE", ""))
        key = (language, environ.get("HTTP_HOST", ""), environ.get("wsgi.url_scheme", ""),
               environ.get("HTTP_X_FORWARDED_PROTO", ""))  # fmt: skip
        head = self._heads.get(key)
        if head is None:
            return self._learnt(environ, start_response, key)
        data = waiting_list_data(sale_id, user_id)
        if data is None:
            return None  # not in Redis: Django publishes it again
        body = waiting_list_body(data)
        start_response(head.status, head.headers_for(body, request_id(environ)))
        self.counts.add((head.view, "GET", head.status[:3], None), head.view, "GET", head.status[:3],
                        time.perf_counter() - started)  # fmt: skip
        return [body]

    def _learnt(self, environ: dict, start_response: Callable, key: tuple) -> Iterable[bytes]:
        """Django answers; the status and headers of a plain answer (200, no cookie set) are
        kept for `key`."""
        result, sent = django_answer(self.app, environ, start_response)
        if not sent or sent[0][0] != "200 OK":
            return result
        status, headers = sent[0]
        names = {name.lower() for name, _value in headers}
        if "set-cookie" in names or REQUEST_ID_HEADER.lower() not in names:
            return result
        from django.urls import resolve

        if len(self._heads) >= HEADS_MAX:
            self._heads.clear()
        self._heads[key] = LearntHead(status, list(headers), resolve(environ["PATH_INFO"]).route)
        return result
