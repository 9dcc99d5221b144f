"""The waiting room below Django (docs/waiting-room.md): a shopper's status poll answered from
Redis by their wait ticket, and the pass required of a sale's buy, captcha and path while its
room is on, so the crowd in line never reaches Django for them.

PassRequired lets through what holds a valid pass for the sale and session (Django checks it
again, with the user), a request with an API token (only Django reads it), and anything for a
sale with no room; it answers the rest the waiting room's refusal (waitingroom.answers), in the
form its client understands. WaitingStatus answers a poll carrying a wait ticket while the
shopper waits; an admitted shopper's poll goes to Django, which hands out the pass."""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Iterable
from urllib.parse import parse_qsl

from django.conf import settings
from django.http import parse_cookie

from seckill.fastpath.refusal import _form_sale_id, _length
from seckill.fastpath.wsgi import LearntHead, django_answer, plain_id, request_id, wsgi_status
from seckill.sale_id import API_BUY, PAGE_BUY, SALE_ID_FIELD
from seckill_site.locale import language_for
from seckill_site.logs import REQUEST_ID_HEADER
from seckill_site.metrics import ThreadCounts
from waitingroom.answers import answer_kind, refusal_response, status_body
from waitingroom.enforce import pass_holds
from waitingroom.passes import pass_cookie
from waitingroom.queue import PREQUEUE, WAITING, Place, place
from waitingroom.room import room_read
from waitingroom.wait_ticket import wait_cookie, wait_read

STATUS_PATH = re.compile(r"^/waiting-room/([^/]+)/status$")
# The page's captcha, spoken captcha and path name their sale in the query (`goodsId`).
PAGE_GETS = re.compile(r"^/seckill/(?:verifyCode|verifyAudio|path)$")
API_GETS = re.compile(r"^/api/v1/sales/([^/]+)/captcha(?:/audio)?$")
API_PATH = re.compile(r"^/api/v1/sales/([^/]+)/path$")
PASS_VIEW = "<waiting room before routing>"
HEADS_MAX = 4096


def _headers(environ: dict) -> dict[str, str]:
    return {name[5:].lower().replace("_", "-"): value for name, value in environ.items() if name.startswith("HTTP_")}


def _query_sale_id(query: str) -> int | None:
    values = [value for name, value in parse_qsl(query, keep_blank_values=True) if name == SALE_ID_FIELD]
    return plain_id(values[0]) if len(values) == 1 else None


class PassRequired:
    """Answers a sale's buy, captcha or path without a pass while its room is on; else None."""

    def __init__(self, counts: ThreadCounts) -> None:
        self.counts = counts
        self.limit = settings.SECKILL_MAX_REQUEST_BYTES
        self.session_cookie = settings.SESSION_COOKIE_NAME
        self.language_cookie = settings.LANGUAGE_COOKIE_NAME

    def _sale_id(self, environ: dict) -> int | None:
        method, path = environ.get("REQUEST_METHOD"), environ.get("PATH_INFO", "")
        if method == "GET":
            if PAGE_GETS.match(path):
                return _query_sale_id(environ.get("QUERY_STRING", ""))
            match = API_GETS.match(path)
            return plain_id(match.group(1)) if match else None
        if method != "POST":
            return None
        match = API_BUY.match(path) or API_PATH.match(path)
        if match:
            return plain_id(match.group(1))
        if PAGE_BUY.match(path):
            length = _length(environ)
            if length is None or length > self.limit:
                return None
            return _form_sale_id(environ, length)
        return None

    def __call__(self, environ: dict, start_response: Callable, started: float) -> list[bytes] | None:
        if "HTTP_AUTHORIZATION" in environ:
            return None
        sale_id = self._sale_id(environ)
        if sale_id is None:
            return None
        room = room_read(sale_id)
        if not room.on:
            return None
        cookies = parse_cookie(environ.get("HTTP_COOKIE", ""))
        session_key = cookies.get(self.session_cookie)
        value = cookies.get(pass_cookie(sale_id))
        if pass_holds(room, sale_id=sale_id, value=value, session_key=session_key, user_id=None):
            return None
        user_id = wait_read(cookies.get(wait_cookie(sale_id)), sale_id=sale_id, session_key=session_key)
        where: Place | None = place(sale_id, user_id, join=False) if user_id is not None else None
        language = language_for(cookies.get(self.language_cookie), environ.get("HTTP_ACCEPT_LANGUAGE", ""))
        kind = answer_kind(environ.get("PATH_INFO", ""), _headers(environ))
        response = refusal_response(kind, where, sale_id, language)
        status = wsgi_status(response)
        start_response(status, [*response.items(), (REQUEST_ID_HEADER, request_id(environ))])
        self.counts.add((PASS_VIEW, environ["REQUEST_METHOD"], status[:3], None), PASS_VIEW,
                        environ["REQUEST_METHOD"], status[:3], time.perf_counter() - started)  # fmt: skip
        return [response.content]


class WaitTicketPoll:
    """A shopper's poll of `path` (the sale's id its one group) carrying their wait ticket,
    answered below Django by `answer(sale_id, user_id)` when it has the body (None sends the
    poll on to Django). The headers are those of Django's own answer to such a poll, learnt by
    letting the first one for each language, host and scheme through."""

    path: re.Pattern[str]

    def __init__(self, app: Callable, counts: ThreadCounts) -> None:
        self.app, self.counts = app, counts
        self.session_cookie = settings.SESSION_COOKIE_NAME
        self.language_cookie = settings.LANGUAGE_COOKIE_NAME
        self._heads: dict[tuple, LearntHead] = {}

    def answer(self, sale_id: int, user_id: int) -> bytes | None:
        raise NotImplementedError

    def __call__(self, environ: dict, start_response: Callable, started: float) -> Iterable[bytes] | None:
        if environ.get("REQUEST_METHOD") != "GET":
            return None
        match = self.path.match(environ.get("PATH_INFO", ""))
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
        body = self.answer(sale_id, user_id)
        if body is None:
            return None
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


class WaitingStatus(WaitTicketPoll):
    """Answers GET /waiting-room/<sale>/status while the shopper waits in line (not admitted:
    Django hands out the pass)."""

    path = STATUS_PATH

    def answer(self, sale_id: int, user_id: int) -> bytes | None:
        found = place(sale_id, user_id, join=False)
        if found.state not in (WAITING, PREQUEUE) or (found.state == WAITING and found.position is None):
            return None  # admitted (the pass is Django's to give), over, or not in line
        return status_body(found)
