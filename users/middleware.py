import time

from django.conf import settings
from django.contrib.auth import SESSION_KEY

REFRESHED_AT = "_refreshed_at"


class SlidingSessionMiddleware:
    """Slide a logged-in session's 30 minutes without writing it to Redis on every request.

    SESSION_SAVE_EVERY_REQUEST would add a Redis write to each hit on the seckill gate;
    re-saving at most once a minute keeps the expiry sliding within a minute of accuracy.
    """

    def __init__(self, get_response):
        self.get_response = get_response
        self.refresh_seconds = settings.SESSION_SLIDING_REFRESH_SECONDS

    def __call__(self, request):
        response = self.get_response(request)
        session = getattr(request, "session", None)
        if session is not None and not session.is_empty() and SESSION_KEY in session:
            now = int(time.time())
            if now - session.get(REFRESHED_AT, 0) >= self.refresh_seconds:
                session[REFRESHED_AT] = now  # marks it modified: SessionMiddleware saves it
        return response
