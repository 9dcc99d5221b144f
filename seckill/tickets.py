"""The result ticket: a signed, short-lived cookie a queued buy leaves in the browser, so that
seckill.fastpath answers the shopper's result polls below Django, with no session load
(docs/fast-answers.md).

It names the user, the sale, the user's auth epoch at the buy (users.sessions) and a digest of
the session the buy came in. The fast path answers only while the poll carries that same session
cookie, Redis still holds that session and that same epoch, and the ticket is younger than the
session surely is: whatever Django would refuse (logged out, even where the old cookies are sent
again; the session flushed or expired; another user logged in; credentials revoked) the ticket
cannot answer either, and all of it is read from Redis alone.

One cookie, the latest buy's, sent to the result poll alone: a shopper waits for one sale at a
time, and a poll for an earlier sale goes to Django as every poll did before.
"""

from __future__ import annotations

import hashlib
import re
import time
from dataclasses import dataclass

from django.conf import settings
from django.contrib.auth import SESSION_KEY
from django.core import signing
from django.http import HttpRequest, HttpResponseBase

from seckill_site.http import positive_int
from users.sessions import AUTH_EPOCH

__all__ = ["Ticket", "session_digest", "ticket_read", "ticket_seconds", "ticket_set"]

SALT = "seckill.result-ticket"
_EPOCH = re.compile(r"[0-9a-f]{1,64}")
_PAYLOAD = re.compile(r"([1-9][0-9]{0,17})\.([1-9][0-9]{0,17})\.([0-9a-f]{1,64})\.([0-9a-f]{16})")


@dataclass(frozen=True)
class Ticket:
    user_id: int
    sale_id: int
    epoch: str  # the user's auth epoch when they bought


def session_digest(session_key: str) -> str:
    """Names the session without carrying its key: a ticket is signed, not secret."""
    return hashlib.sha256(session_key.encode()).hexdigest()[:16]


def ticket_seconds() -> int:
    """SECKILL_RESULT_TICKET_SECONDS, held below the shortest life the buy's session has left
    (the buy slid its expiry at most SESSION_SLIDING_REFRESH_SECONDS before): the fast path
    never sees an expired session, so the ticket must end first."""
    session_left = settings.SESSION_COOKIE_AGE - settings.SESSION_SLIDING_REFRESH_SECONDS
    return max(0, min(settings.SECKILL_RESULT_TICKET_SECONDS, session_left))


def _signer() -> signing.TimestampSigner:
    return signing.TimestampSigner(salt=SALT)


def ticket_set(response: HttpResponseBase, *, request: HttpRequest, user_id: int, sale_id: int) -> None:
    """Set the ticket on a queued buy's answer, when the buy came in `user_id`'s session (a
    request with an API token alone has none, and the page's poll reads only the session)."""
    session = getattr(request, "session", None)
    seconds = ticket_seconds()
    if session is None or session.session_key is None or not seconds:
        return
    epoch = session.get(AUTH_EPOCH)
    if positive_int(session.get(SESSION_KEY)) != user_id or not isinstance(epoch, str) or not _EPOCH.fullmatch(epoch):
        return
    value = _signer().sign(f"{user_id}.{sale_id}.{epoch}.{session_digest(session.session_key)}")
    response.set_cookie(
        settings.SECKILL_RESULT_TICKET_COOKIE,
        value,
        max_age=seconds,
        path=settings.SECKILL_RESULT_TICKET_PATH,
        secure=settings.SESSION_COOKIE_SECURE,
        httponly=True,
        samesite="Lax",
    )


# (cookie value, session key) -> (its ticket, signed at): a shopper polls with one ticket many
# times, and its signature and session digest need checking only the first; the age, every time.
_read: dict[tuple[str, str], tuple[Ticket, int]] = {}
READ_MAX = 16384  # tickets remembered per process, then forgotten all at once


def ticket_read(value: str | None, *, session_key: str | None) -> Ticket | None:
    """The ticket in a cookie's `value` when its signature holds, it is younger than
    ticket_seconds() and it was issued in the session `session_key`; else None."""
    if not value or not session_key:
        return None
    known = _read.get((value, session_key))
    if known is None:
        known = _verified(value, session_key)
        if known is None:
            return None
        if len(_read) >= READ_MAX:
            _read.clear()
        _read[(value, session_key)] = known
    ticket, signed_at = known
    return ticket if time.time() - signed_at <= ticket_seconds() else None


def _verified(value: str, session_key: str) -> tuple[Ticket, int] | None:
    try:
        payload = _signer().unsign(value)
        signed_at = signing.b62_decode(value.rsplit(_signer().sep, 2)[1])
    except (signing.BadSignature, ValueError, IndexError):
        return None
    match = _PAYLOAD.fullmatch(payload)
    if match is None or match.group(4) != session_digest(session_key):
        return None
    return Ticket(user_id=int(match.group(1)), sale_id=int(match.group(2)), epoch=match.group(3)), signed_at
