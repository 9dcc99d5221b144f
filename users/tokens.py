"""API tokens: issued at login, cached in Redis so the gate's endpoints never read the token
table, expiring a fixed time after issue, and revoked with the user's other credentials."""

import hashlib
import time
from datetime import UTC, datetime
from typing import Any

from rest_framework.authtoken.models import Token

from seckill_site.redis import client, keys, text

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


def _token_cache_key(key: str) -> str:
    # Hashed: a Redis dump or MONITOR never shows usable tokens.
    return keys.api_token(hashlib.sha256(key.encode()).hexdigest())


def _token_expires(token_created) -> int:
    return int(token_created.timestamp()) + TOKEN_LIFETIME


def _token_cache_set(key: str, user_id: int, expires: int) -> None:
    ttl = min(TOKEN_CACHE_TTL, expires - int(time.time()))
    if ttl > 0:
        client().set(_token_cache_key(key), f"{user_id}:{expires}", ex=ttl)


def api_token_issue(*, user_id: int) -> str:
    """The user's API token (one per user, shared by their devices), created on first login
    and again once it has expired."""
    token = Token.objects.filter(user_id=user_id).first()
    if token is not None and _token_expires(token.created) <= time.time():
        api_token_revoke(key=token.key)
        token = None
    if token is None:
        token, _created = Token.objects.get_or_create(user_id=user_id)
    _token_cache_set(token.key, user_id, _token_expires(token.created))
    return token.key


def api_token_revoke(*, key: str) -> None:
    """Log the token out everywhere: delete the row, then the cache entry (a request that
    reads the cache between the two may still pass; none can after)."""
    Token.objects.filter(key=key).delete()
    client().delete(_token_cache_key(key))


def api_token_keys(*, user_id: int) -> list[str]:
    return list(Token.objects.filter(user_id=user_id).values_list("key", flat=True))


def api_token_cache_drop(*, keys: list[str]) -> None:
    """Forget these tokens' cache entries (their rows are gone already)."""
    for key in keys:  # one key per call: each lives in its own slot of a cluster
        client().delete(_token_cache_key(key))


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
    row = Token.objects.filter(key=key, user__is_active=True).values_list("user_id", "created").first()
    if row is None or _token_expires(row[1]) <= time.time():
        client().set(cache_key, _MISSING, ex=TOKEN_MISSING_TTL)
        return None
    _token_cache_set(key, row[0], _token_expires(row[1]))
    return row[0]
