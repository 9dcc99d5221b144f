"""Session engine: Django's cache sessions, except that a store that cannot be read is an error.

Django's cache backend treats any error while loading as "no session", so during a Redis
outage or a Redis Cluster failover every logged-in shopper would be told to log in again.
Here the error propagates and seckill_site.errors answers 503 "busy, retry"; the session is
still there once Redis answers again.
"""

from django.contrib.sessions.backends.cache import SessionStore as CacheSessionStore


class SessionStore(CacheSessionStore):
    def load(self):
        session_data = self._cache.get(self.cache_key)
        if session_data is not None:
            return session_data
        self._session_key = None
        return {}
