"""A draw's seed, which no query can reach before the draw (docs/draw.md).

The database holds a random nonce and the seed's SHA-256, never the seed: the seed is
HMAC-SHA256 of the nonce under the draw key, which lives in the web and worker processes'
settings only (`DRAW_SEED_KEY`, else derived from `SECRET_KEY`). A filter, an export, an API,
a log line or a backup of the database therefore carries nothing the seed can be rebuilt
from. At the draw the seed is derived, checked against the hash published when the sale was
set to draw, and stored beside it: from then on it is public.

A rotated key keeps working while the old one is in `DRAW_SEED_KEY_FALLBACKS` or
`SECRET_KEY_FALLBACKS`: the drawer tries each key until one gives the published hash.
"""

import hashlib
import secrets
from dataclasses import dataclass

from django.conf import settings
from django.utils.crypto import salted_hmac

# Keeps the draw's use of SECRET_KEY apart from Django's (sessions, signing, password resets).
KEY_SALT = "seckill.draw.seed"


class SeedKeyLost(Exception):
    """No configured key gives the seed its published hash: the draw cannot keep its promise
    until the key that made it is configured again (as the key or a fallback)."""


@dataclass(frozen=True)
class SeedCommitment:
    """What is stored when a sale is set to draw: the nonce and the public hash."""

    nonce: str
    sha256: str


def _keys() -> list[str]:
    primary = settings.DRAW_SEED_KEY or settings.SECRET_KEY
    fallbacks = [*settings.DRAW_SEED_KEY_FALLBACKS, *settings.SECRET_KEY_FALLBACKS]
    return [primary, *(key for key in fallbacks if key and key != primary)]


def _seed(nonce: str, key: str) -> str:
    return salted_hmac(KEY_SALT, nonce, secret=key, algorithm="sha256").hexdigest()


def sha256_hex(seed: str) -> str:
    return hashlib.sha256(seed.encode()).hexdigest()


def seed_commit(nonce: str | None = None) -> SeedCommitment:
    """A draw's nonce (a new random one unless given) and its seed's hash under the current key."""
    nonce = nonce or secrets.token_hex(32)
    return SeedCommitment(nonce=nonce, sha256=sha256_hex(_seed(nonce, _keys()[0])))


def seed_reveal(*, nonce: str, sha256: str) -> str:
    """The seed whose hash was published; SeedKeyLost when no configured key gives it."""
    for key in _keys():
        seed = _seed(nonce, key)
        if sha256_hex(seed) == sha256:
            return seed
    raise SeedKeyLost(f"no configured draw key gives the seed hashed {sha256}")
