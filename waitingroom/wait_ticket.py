"""The wait ticket: a signed cookie naming the shopper in a sale's line, so that the fast path
answers their status poll from Redis with no session load (docs/waiting-room.md).

It is set by the waiting room's own views and by a draw's waiting list's
(`/seckill/waitingList/<sale>`), read by their polls alone, and bound to the session as the
pass is: the fast path answers only while the same session cookie comes with it. It tells
where someone stands in a line and nothing more, so it is no pass: its key is derived under
a salt of its own.

Cookie `seckill_wait_<sale id>`, value `<user>.<sale>.<session digest>:<signed at>:<HMAC hex>`.
"""

from __future__ import annotations

import hashlib
import hmac
import re
import time
from functools import cache

from django.conf import settings
from django.http import HttpRequest, HttpResponse
from django.utils.crypto import salted_hmac

__all__ = ["COOKIE_PREFIX", "WAIT_SECONDS", "wait_cookie", "wait_read", "wait_signed", "wait_ticket_set"]

SALT = "seckill.waiting-room-wait"
COOKIE_PREFIX = "seckill_wait_"
# Longer than any wait: the line is read again from Redis on every poll anyway.
WAIT_SECONDS = 6 * 60 * 60
_SIGNED = re.compile(r"([1-9][0-9]{0,17})\.([1-9][0-9]{0,17})\.([0-9a-f]{16}):([1-9][0-9]{0,11}):([0-9a-f]{64})")


def wait_cookie(sale_id: int) -> str:
    return f"{COOKIE_PREFIX}{sale_id}"


@cache
def _key(secret: str) -> str:
    return salted_hmac(SALT, "wait-key", secret=secret, algorithm="sha256").hexdigest()


def _digest(session_key: str) -> str:
    return hashlib.sha256(session_key.encode()).hexdigest()[:16]


def _signature(key: str, message: str) -> str:
    return hmac.new(key.encode(), message.encode(), hashlib.sha256).hexdigest()


def wait_signed(*, user_id: int, sale_id: int, session_key: str) -> str:
    """A wait ticket for `user_id` in the line of `sale_id`, from session `session_key`."""
    message = f"{user_id}.{sale_id}.{_digest(session_key)}:{int(time.time())}"
    return f"{message}:{_signature(_key(settings.SECRET_KEY), message)}"


def wait_read(value: str | None, *, sale_id: int, session_key: str | None) -> int | None:
    """The user id of the wait ticket in `value` when it is for `sale_id`, signed for the
    session `session_key` and younger than WAIT_SECONDS; else None."""
    if not value or not session_key:
        return None
    match = _SIGNED.fullmatch(value)
    if match is None:
        return None
    user, sale, digest, signed_at, signature = match.groups()
    if int(sale) != sale_id or not hmac.compare_digest(digest, _digest(session_key)):
        return None
    if not 0 <= time.time() - int(signed_at) <= WAIT_SECONDS:
        return None
    message = value[: -len(signature) - 1]
    secrets = [settings.SECRET_KEY, *settings.SECRET_KEY_FALLBACKS]
    if not any(hmac.compare_digest(_signature(_key(secret), message), signature) for secret in secrets):
        return None
    return int(user)


def wait_ticket_set(request: HttpRequest, response: HttpResponse, *, sale_id: int, user_id: int) -> None:
    """Set the wait ticket on `response` unless the request carries it already, so the fast
    path answers this shopper's next polls of the sale."""
    session_key = request.session.session_key
    if session_key is None:  # a logged-in session has its key: nothing to bind a ticket to
        return
    if wait_read(request.COOKIES.get(wait_cookie(sale_id)), sale_id=sale_id, session_key=session_key) == user_id:
        return
    response.set_cookie(
        wait_cookie(sale_id),
        wait_signed(user_id=user_id, sale_id=sale_id, session_key=session_key),
        max_age=WAIT_SECONDS,
        path="/",
        secure=settings.SESSION_COOKIE_SECURE,
        httponly=True,
        samesite="Lax",
    )
