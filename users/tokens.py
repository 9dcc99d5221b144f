"""API tokens: issued at login, cached in Redis so the gate's endpoints never read the token
table, expiring a fixed time after issue, and revoked with the user's other credentials.

A revocation must not be undone by a request that read the token row just before it. So the
cache is filled only where it is empty (SET NX), and only by a read at most FILL_DEADLINE old;
a revocation overwrites the entry with a marker that outlives that deadline (REVOKED_TTL).
Whatever order the two writes land in, the marker wins."""

import hashlib
import time
from datetime import UTC, datetime
from typing import Any

from rest_framework.authtoken.models import Token

from seckill_site.redis import client, text
from users import keys

# token -> "user id:expiry", cached in Redis so the gate's endpoints never read the token
# table. Revoking (logout, logout everywhere, password change, deactivation, an admin's edit:
# users.revocation.user_auth_revoke) deletes the rows and their cache entries at once.
TOKEN_CACHE_TTL = 30 * 60
# A token expires a fixed time after it was issued, however much it is used: log in again
# for a new one. A leaked token is worth at most this long.
TOKEN_LIFETIME = 30 * 24 * 60 * 60
# An unknown token is remembered briefly, so a client looping over made-up tokens costs
# one Redis read each, not a PostgreSQL query.
TOKEN_MISSING_TTL = 60
_MISSING = b"0"
# A cache fill from a database read older than this is dropped (the next request reads again);
# a revocation's marker lives far longer, so no fill begun before a revocation lands after it.
FILL_DEADLINE = 10
REVOKED_TTL = TOKEN_CACHE_TTL


def _token_cache_key(key: str) -> str:
    # Hashed: a Redis dump or MONITOR never shows usable tokens.
    return keys.api_token(hashlib.sha256(key.encode()).hexdigest())


def _token_expires(token_created) -> int:
    return int(token_created.timestamp()) + TOKEN_LIFETIME


def _token_cache_fill(key: str, value: str | bytes, ttl: int, *, read_at: float) -> None:
    """Cache what a read begun at `read_at` (time.monotonic) found, unless the entry exists
    (a revocation's marker among others) or the read is too old to be trusted."""
    if ttl > 0 and time.monotonic() - read_at < FILL_DEADLINE:
        client().set(_token_cache_key(key), value, ex=ttl, nx=True)


def _token_cache_set(key: str, user_id: int, expires: int, *, read_at: float) -> None:
    ttl = min(TOKEN_CACHE_TTL, expires - int(time.time()))
    _token_cache_fill(key, f"{user_id}:{expires}", ttl, read_at=read_at)


def api_token_issue(*, user_id: int) -> str:
    """The user's API token (one per user, shared by their devices), created on first login
    and again once it has expired."""
    read_at = time.monotonic()
    token = Token.objects.filter(user_id=user_id).first()
    if token is not None and _token_expires(token.created) <= time.time():
        api_token_revoke(key=token.key)
        token = None
    if token is None:
        token, _created = Token.objects.get_or_create(user_id=user_id)
    _token_cache_set(token.key, user_id, _token_expires(token.created), read_at=read_at)
    return token.key


def api_token_revoke(*, key: str) -> None:
    """Log the token out everywhere: delete the row, then mark the cache entry revoked (a
    request that reads the cache between the two may still pass; none can after)."""
    Token.objects.filter(key=key).delete()
    api_token_cache_drop(keys=[key])


def api_token_keys(*, user_id: int) -> list[str]:
    return list(Token.objects.filter(user_id=user_id).values_list("key", flat=True))


def api_token_cache_drop(*, keys: list[str]) -> None:
    """Mark these tokens revoked in the cache (their rows are gone already): overwritten,
    not deleted, so that a fill from a read made before the rows went cannot bring them back."""
    for key in keys:  # one key per call: each lives in its own slot of a cluster
        client().set(_token_cache_key(key), _MISSING, ex=REVOKED_TTL)


def api_tokens_revoke(*, user_id: int) -> None:
    """Every token of the user, rows first, then their cache entries."""
    revoked = api_token_keys(user_id=user_id)
    Token.objects.filter(key__in=revoked).delete()
    api_token_cache_drop(keys=revoked)


def api_tokens_of(*, user_id: int) -> list[dict[str, Any]]:
    """The user's live tokens as they may see them: never the key, only its first characters."""
    tokens = Token.objects.filter(user_id=user_id).order_by("created")
    return [
        {
            "prefix": token.key[:6],
            "createdAt": token.created.isoformat(),
            "expiresAt": datetime.fromtimestamp(_token_expires(token.created), tz=UTC).isoformat(),
        }
        for token in tokens
        if _token_expires(token.created) > time.time()
    ]


def api_token_user_id(key: str) -> int | None:
    """The user id a live token stands for: Redis first (one read, expiry included), the
    token table on a miss."""
    cache_key = _token_cache_key(key)
    cached = client().get(cache_key)
    if cached == _MISSING:
        return None
    if cached is not None:
        user_id, _, expires = text(cached).partition(":")
        if expires:
            return int(user_id) if int(expires) > time.time() else None
    read_at = time.monotonic()
    row = Token.objects.filter(key=key, user__is_active=True).values_list("user_id", "created").first()
    if row is None or _token_expires(row[1]) <= time.time():
        _token_cache_fill(key, _MISSING, TOKEN_MISSING_TTL, read_at=read_at)
        return None
    _token_cache_set(key, row[0], _token_expires(row[1]), read_at=read_at)
    return row[0]
