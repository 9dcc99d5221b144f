"""Session engine: Django's cache sessions, with two changes.

A store that cannot be read is an error. Django's cache backend treats any error while
loading as "no session", so during a Redis outage or a Redis Cluster failover every
logged-in shopper would be told to log in again. Here the error propagates and
seckill_site.errors answers 503 "busy, retry"; the session is still there once Redis answers.

A logged-in session ends the moment its user's credentials are revoked (password change,
deactivation, logout everywhere, an admin's edit: users.revocation.user_auth_revoke), on every
page and at the seckill gate, which never reads PostgreSQL. The session holds the user's auth
epoch as it was at login (`_auth_epoch`); revoking writes a new random epoch to Redis. Its key
carries the user's hash tag (`u42.<random>` is stored under `...{u42}...`, next to
`auth:{u42}:epoch`), so loading reads the session and the epoch in one pipeline to one Redis
node: one round trip, as before. A session whose epoch differs is deleted and loads empty.

The same holds when Redis has no epoch for the user, or the session carries none: every user
who logs in gets an epoch first (auth_epoch_ensure), so a missing one means it was lost, and a
lost revocation must not read as "never revoked". The shop's Redis must therefore evict
nothing (maxmemory-policy noeviction, which readiness checks).
"""

import re
import secrets

from django.contrib.auth import SESSION_KEY
from django.contrib.sessions.backends.base import VALID_KEY_CHARS
from django.contrib.sessions.backends.cache import SessionStore as CacheSessionStore
from django.utils.crypto import get_random_string
from redis.crc import key_slot

from seckill_site.http import positive_int
from seckill_site.redis import client, text
from users import keys

AUTH_EPOCH = "_auth_epoch"
_USER_KEY = re.compile(r"u([0-9]{1,18})\.[a-z0-9]{32}")


def auth_epoch(user_id: int) -> str | None:
    """The user's current auth epoch; None until their credentials are first revoked."""
    epoch = client().get(keys.auth_epoch(user_id))
    return text(epoch) if epoch is not None else None


def auth_epoch_slot(user_id: int) -> int:
    """The Redis Cluster slot of the user's auth epoch, which every session and token checks."""
    return key_slot(keys.auth_epoch(user_id).encode())


def auth_epoch_ensure(user_id: int) -> str:
    """The user's auth epoch, made now if they have none: what a session or token issued from
    here on is checked against. One round trip; an epoch a revocation wrote is kept."""
    pipe = client().pipeline(transaction=False)
    pipe.set(keys.auth_epoch(user_id), secrets.token_hex(8), nx=True)
    pipe.get(keys.auth_epoch(user_id))
    _created, epoch = pipe.execute()
    return text(epoch)


def _user_of_key(session_key: str | None) -> int | None:
    match = _USER_KEY.fullmatch(session_key or "")
    return int(match.group(1)) if match else None


def session_stored_key(session_key: str) -> str:
    """The Redis key `session_key` is stored under, for a reader below Django (seckill.fastpath)
    that must refuse what Django refuses: logout, flush and expiry delete that key. Whether its
    epoch still holds is a second key, keys.auth_epoch."""
    store = SessionStore(session_key)
    return str(store._cache.client.make_key(store._cache_key_of(session_key)))  # type: ignore[attr-defined]  # the cache backend's


class SessionStore(CacheSessionStore):
    def _cache_key_of(self, session_key: str) -> str:
        user_id = _user_of_key(session_key)
        if user_id is None:
            return self.cache_key_prefix + session_key
        return f"{self.cache_key_prefix}{{u{user_id}}}{session_key}"  # the hash tag of keys.auth_epoch

    @property
    def cache_key(self) -> str:
        return self._cache_key_of(self._get_or_create_session_key())  # type: ignore[attr-defined]  # SessionBase's

    def exists(self, session_key: str) -> bool:
        return bool(session_key) and self._cache_key_of(session_key) in self._cache  # type: ignore[attr-defined]  # the cache backend's store

    def delete(self, session_key: str | None = None) -> None:
        session_key = session_key or self.session_key
        if session_key is not None:
            self._cache.delete(self._cache_key_of(session_key))  # type: ignore[attr-defined]

    def _get_new_session_key(self) -> str:
        # A logged-in session's key names its user (see the module's docstring). Not a secret:
        # the 32 random characters are what a thief would need.
        user_id = positive_int((self.__dict__.get("_session_cache") or {}).get(SESSION_KEY))
        while True:
            key = get_random_string(32, VALID_KEY_CHARS)
            if user_id is not None:
                key = f"u{user_id}.{key}"
            if not self.exists(key):
                return key

    def load(self):
        user_id = _user_of_key(self.session_key)
        if user_id is None:
            session_data = self._cache.get(self.cache_key)
            epoch = None
            if session_data is not None and SESSION_KEY in session_data:
                # A logged-in session from before keys named their user: a second read.
                epoch = auth_epoch(positive_int(session_data[SESSION_KEY]) or 0)
        else:
            # The session cache's own connection (the shop's client() is the same server), one
            # slot: one node, one round trip.
            pipe = self._cache.client.get_client(write=True).pipeline(transaction=False)  # the primary: fresh
            pipe.get(self._cache.client.make_key(self.cache_key))
            pipe.get(keys.auth_epoch(user_id))
            raw, raw_epoch = pipe.execute()
            session_data = self._cache.client.decode(raw) if raw is not None else None
            epoch = raw_epoch.decode() if raw_epoch is not None else None
        stamp = session_data.get(AUTH_EPOCH) if session_data is not None else None
        if session_data is not None and SESSION_KEY in session_data and (epoch is None or stamp != epoch):
            self._cache.delete(self.cache_key)  # revoked: it must not be extended either
            session_data = None
        if session_data is not None:
            return session_data
        self._session_key = None
        return {}

    def cycle_key(self) -> None:
        """A new key, stamped with the user's current epoch: after login (users.apps connects
        it) and after a password change that keeps the session (update_session_auth_hash)."""
        data = self.__dict__.get("_session_cache") or {}
        user_id = positive_int(data.get(SESSION_KEY))
        if user_id is not None:
            self[AUTH_EPOCH] = auth_epoch_ensure(user_id)
        super().cycle_key()

    def save(self, must_create: bool = False) -> None:
        # A logged-in session is never stored without an epoch (it would never load again).
        # Django's login stamps it in cycle_key, before this; sessions made by other code
        # (the lab's prepared shoppers) are stamped here.
        data = self._get_session(no_load=must_create)  # type: ignore[attr-defined]  # SessionBase's
        user_id = positive_int(data.get(SESSION_KEY))
        if user_id is not None and data.get(AUTH_EPOCH) is None:
            data[AUTH_EPOCH] = auth_epoch_ensure(user_id)
        super().save(must_create)
