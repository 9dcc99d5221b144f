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

The signature is one the edge (deploy/edge-answers.vcl, vmod digest) checks too:
`<payload>:<signed at, epoch seconds>:<HMAC-SHA256 hex>`, keyed with the text ticket_key()
derives from SECRET_KEY under a salt of its own, so the edge never holds Django's signing key.
Tickets signed with a key of SECRET_KEY_FALLBACKS still hold here, not at the edge.
"""

from __future__ import annotations

import hashlib
import hmac
import re
import time
from dataclasses import dataclass
from functools import cache

from django.conf import settings
from django.contrib.auth import SESSION_KEY
from django.core.signals import setting_changed
from django.dispatch import receiver
from django.http import HttpRequest, HttpResponseBase
from django.utils.crypto import salted_hmac

from seckill_site.http import positive_int
from users.sessions import AUTH_EPOCH

__all__ = ["Ticket", "session_digest", "ticket_key", "ticket_read", "ticket_seconds", "ticket_set", "ticket_signed"]

SALT = "seckill.result-ticket"
_EPOCH = re.compile(r"[0-9a-f]{1,64}")
_PAYLOAD = re.compile(r"([1-9][0-9]{0,17})\.([1-9][0-9]{0,17})\.([0-9a-f]{1,64})\.([0-9a-f]{16})")
_SIGNED = re.compile(r"([^:]{1,200}):([1-9][0-9]{0,11}):([0-9a-f]{64})")


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


def ticket_key(secret: str | None = None) -> str:
    """The tickets' HMAC key as hex text (vmod digest takes a text key): derived from `secret`
    (SECRET_KEY by default) under the tickets' own salt, so it signs nothing else."""
    return _key(secret or settings.SECRET_KEY)


@cache
def _key(secret: str) -> str:
    return salted_hmac(SALT, "edge-key", secret=secret, algorithm="sha256").hexdigest()


def _signature(key: str, signed: str) -> str:
    return hmac.new(key.encode(), signed.encode(), hashlib.sha256).hexdigest()


def ticket_signed(payload: str, signed_at: int) -> str:
    """`payload` signed with ticket_key() as signed at `signed_at` (epoch seconds)."""
    signed = f"{payload}:{signed_at}"
    return f"{signed}:{_signature(ticket_key(), signed)}"


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
    value = ticket_signed(f"{user_id}.{sale_id}.{epoch}.{session_digest(session.session_key)}", int(time.time()))
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


@receiver(setting_changed)
def _read_forget(*, setting: str, **_kwargs) -> None:
    """The memo holds what the keys verified (tests rotate them)."""
    if setting in ("SECRET_KEY", "SECRET_KEY_FALLBACKS"):
        _read.clear()


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
    signed = _SIGNED.fullmatch(value)
    if signed is None:
        return None
    payload, signed_at, signature = signed.groups()
    message = f"{payload}:{signed_at}"
    secrets = [settings.SECRET_KEY, *settings.SECRET_KEY_FALLBACKS]
    if not any(hmac.compare_digest(_signature(ticket_key(secret), message), signature) for secret in secrets):
        return None
    match = _PAYLOAD.fullmatch(payload)
    if match is None or match.group(4) != session_digest(session_key):
        return None
    return Ticket(user_id=int(match.group(1)), sale_id=int(match.group(2)), epoch=match.group(3)), int(signed_at)
