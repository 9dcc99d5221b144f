"""The waiting room's pass: a signed, short-lived cookie an admitted shopper holds for one sale,
bound to the session they were admitted in, as the result ticket is (seckill.tickets).

The buy path checks it below Django (seckill.fastpath, and the edge's deploy/edge-pass.vcl
with vmod digest): no database, no session load, only an HMAC and the room's pass life.

Cookie `seckill_pass_<sale id>`, value `<user>.<sale>.<session digest>:<signed at>:<HMAC hex>`,
keyed with the text pass_key() derives from SECRET_KEY under a salt of its own, so the edge
holds neither Django's signing key nor the result ticket's.
"""

from __future__ import annotations

import hashlib
import hmac
import re
import time
from dataclasses import dataclass
from functools import cache

from django.conf import settings
from django.utils.crypto import salted_hmac

__all__ = ["COOKIE_PREFIX", "Pass", "pass_cookie", "pass_key", "pass_read", "pass_signed"]

SALT = "seckill.waiting-room-pass"
COOKIE_PREFIX = "seckill_pass_"
_SIGNED = re.compile(r"([1-9][0-9]{0,17})\.([1-9][0-9]{0,17})\.([0-9a-f]{16}):([1-9][0-9]{0,11}):([0-9a-f]{64})")


@dataclass(frozen=True)
class Pass:
    user_id: int
    sale_id: int
    signed_at: int


def pass_cookie(sale_id: int) -> str:
    """The cookie that carries the pass for `sale_id`: one per sale a shopper was admitted to."""
    return f"{COOKIE_PREFIX}{sale_id}"


def pass_key(secret: str | None = None) -> str:
    """The passes' HMAC key as hex text (vmod digest takes a text key)."""
    return _key(secret or settings.SECRET_KEY)


@cache
def _key(secret: str) -> str:
    return salted_hmac(SALT, "edge-key", secret=secret, algorithm="sha256").hexdigest()


def _session_digest(session_key: str) -> str:
    return hashlib.sha256(session_key.encode()).hexdigest()[:16]


def _signature(key: str, signed: str) -> str:
    return hmac.new(key.encode(), signed.encode(), hashlib.sha256).hexdigest()


def pass_signed(*, user_id: int, sale_id: int, session_key: str, signed_at: int | None = None) -> str:
    """A pass for `user_id` to buy in `sale_id` from session `session_key`, signed now."""
    at = int(time.time()) if signed_at is None else signed_at
    message = f"{user_id}.{sale_id}.{_session_digest(session_key)}:{at}"
    return f"{message}:{_signature(pass_key(), message)}"


def pass_read(value: str | None, *, sale_id: int, session_key: str | None, seconds: int) -> Pass | None:
    """The pass in `value` when it is for `sale_id`, was signed for the session `session_key`
    (under SECRET_KEY or a fallback), and is at most `seconds` old; else None."""
    if not value or not session_key or seconds <= 0:
        return None
    match = _SIGNED.fullmatch(value)
    if match is None:
        return None
    user, sale, digest, signed_at, signature = match.groups()
    if int(sale) != sale_id or not hmac.compare_digest(digest, _session_digest(session_key)):
        return None
    if not 0 <= time.time() - int(signed_at) <= seconds:
        return None
    message = value[: -len(signature) - 1]
    secrets = [settings.SECRET_KEY, *settings.SECRET_KEY_FALLBACKS]
    if not any(hmac.compare_digest(_signature(pass_key(secret), message), signature) for secret in secrets):
        return None
    return Pass(user_id=int(user), sale_id=sale_id, signed_at=int(signed_at))
