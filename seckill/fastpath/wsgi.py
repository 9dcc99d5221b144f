"""What the fast path's answerers share: their contract, and the WSGI pieces each reads the same
way Django does (the request id, the language cookie, a plain id in a URL, Django's own answer
seen on its way out)."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from typing import Any, Protocol

from django.http import HttpResponse, parse_cookie

from seckill_site.logs import REQUEST_ID_HEADER, REQUEST_ID_META, request_id_for

Sent = list[tuple[str, list[tuple[str, str]]]]


class Answerer(Protocol):
    def __call__(self, environ: dict, start_response: Callable, started: float) -> Iterable[bytes] | None:
        """The answer's body, after calling start_response, or None (nothing sent) for the next
        answerer or Django; `started` is the request's perf_counter, for the metrics."""


# positive_int's plain spelling only; its other spellings (spaces, signs, leading zeros) go to Django.
_ID = re.compile(r"[1-9][0-9]{0,17}")


def plain_id(text: str) -> int | None:
    return int(text) if _ID.fullmatch(text) else None


def request_id(environ: dict) -> str:
    return request_id_for(environ.get(REQUEST_ID_META, ""))


def language_chosen(cookie: str, name: str) -> str | None:
    """The language cookie `name`'s value, parsing the header only when it names the cookie."""
    return parse_cookie(cookie).get(name) if name in cookie else None


def wsgi_status(response: HttpResponse) -> str:
    return f"{response.status_code} {response.reason_phrase}"  # as django.core.handlers.wsgi


def django_answer(app: Callable, environ: dict, start_response: Callable) -> tuple[Any, Sent]:
    """Django's answer to the request, passed on as it is, and the status and headers it sent."""
    sent: Sent = []

    def start_response_kept(status: str, headers: list[tuple[str, str]], exc_info: Any = None) -> Any:
        sent.append((status, headers))
        return start_response(status, headers) if exc_info is None else start_response(status, headers, exc_info)

    return app(environ, start_response_kept), sent


class LearntHead:
    """The status and headers of Django's answer to a kind of request the fast path answers
    itself afterwards, for any body: where the request id and the length go in them."""

    __slots__ = ("headers", "length_at", "rid_at", "status", "view")

    def __init__(self, status: str, headers: list[tuple[str, str]], view: str) -> None:
        names = [name.lower() for name, _value in headers]
        self.rid_at = names.index(REQUEST_ID_HEADER.lower())
        self.length_at = names.index("content-length") if "content-length" in names else None
        self.status, self.headers, self.view = status, headers, view

    def headers_for(self, body: bytes, rid: str) -> list[tuple[str, str]]:
        """Django's headers with this request's id and `body`'s length."""
        headers = list(self.headers)
        headers[self.rid_at] = (REQUEST_ID_HEADER, rid)
        if self.length_at is not None:
            headers[self.length_at] = (headers[self.length_at][0], str(len(body)))
        return headers
