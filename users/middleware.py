import logging
import time

from django.conf import settings
from django.contrib.auth import SESSION_KEY
from django.contrib.sessions.middleware import SessionMiddleware as DjangoSessionMiddleware

from seckill_site.errors import service_unavailable, unavailable_response
from seckill_site.shared import is_shared

logger = logging.getLogger(__name__)

REFRESHED_AT = "_refreshed_at"
# Set on a request whose session is saved only to slide its expiry (nothing else changed).
SLIDE_ONLY = "_session_slide_only"


class SessionMiddleware(DjangoSessionMiddleware):
    """Django's session middleware, except when Redis cannot take the session's save: if the
    save only slid the expiry, the view's answer stands (a purchase already queued must not
    turn into an error because Redis failed over between the gate and the re-save); if the
    view needed it (a login, a logout), the answer is 503 "busy, retry", not a 500."""

    def process_response(self, request, response):
        try:
            return super().process_response(request, response)
        except Exception as error:
            if not service_unavailable(error):
                raise
            logger.warning("session not saved on %s: %r", request.path, error)
            return response if getattr(request, SLIDE_ONLY, False) else unavailable_response(request)


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
        if is_shared(response):
            return response  # everybody's answer: it read no session, and sets no cookie
        try:
            self._slide(request)
        except Exception as error:
            # The view has answered (a 503 already, if it needed Redis): keep its answer.
            if not service_unavailable(error):
                raise
        return response

    def _slide(self, request) -> None:
        session = getattr(request, "session", None)
        if session is not None and not session.is_empty() and SESSION_KEY in session:
            now = int(time.time())
            if now - session.get(REFRESHED_AT, 0) >= self.refresh_seconds:
                setattr(request, SLIDE_ONLY, not session.modified)
                session[REFRESHED_AT] = now  # marks it modified: SessionMiddleware saves it
