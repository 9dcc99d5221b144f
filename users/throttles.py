"""The login endpoints' per-account throttle, on the login page's counter (seckill_site.api has
the throttles that need nothing of the users app)."""

from rest_framework.request import Request

from seckill_site.api import PerIpThrottle, RatelimitThrottle, throttle
from users.models import mobile_normalize
from users.services import LOGIN_GROUP_IP, LOGIN_GROUP_MOBILE, LOGIN_RATE_PER_IP, LOGIN_RATE_PER_MOBILE


class PerMobileThrottle(RatelimitThrottle):
    def key_of(self, request: Request) -> str | None:
        # The account as the login form reads it (users.services.login_attempt_limited): spaces,
        # Unicode digits or a JSON number must not open a fresh bucket for the same account.
        data = request.data
        return mobile_normalize(data.get("mobile") if hasattr(data, "get") else None)


# The login page's two counters, for every API endpoint that logs in (password or code): one
# budget per IP and per mobile number, whichever way an attacker tries.
LOGIN_THROTTLES = [
    throttle(PerIpThrottle, LOGIN_GROUP_IP, LOGIN_RATE_PER_IP),
    throttle(PerMobileThrottle, LOGIN_GROUP_MOBILE, LOGIN_RATE_PER_MOBILE),
]
