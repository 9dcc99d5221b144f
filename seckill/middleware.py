"""`SoldOutMiddleware`: a buy for a sale this process knows is sold out, not started or ended
is refused first in the stack, before the session, CSRF or locale middleware.

The answer is the gate's own (seckill.services.gate.seckill_attempt says why it may be given to
anyone), with the bytes seckill.fastpath gives below Django. This covers what the fast path
leaves to Django and every other way in (runserver, the test client, ASGI).
"""

from django.conf import settings
from django.http import HttpRequest, HttpResponse

from goods import sale_state
from seckill import fastpath
from seckill.observe import attempt_answered
from seckill_site.http import positive_int
from seckill_site.locale import language_for
from seckill_site.redis import REDIS_FAILURES


class SoldOutMiddleware:
    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        if request.method == "POST":
            sale_id = self._sale_id(request)
            if sale_id is not None:
                try:
                    refusal = sale_state.refusal_known(sale_id, ask=True)
                except REDIS_FAILURES:  # the view meets the outage too, and answers it (a 503)
                    refusal = None
                if refusal is not None:
                    code = refusal.code
                    attempt_answered(sale_id=sale_id, code=code)  # a counter and log fields
                    request.metrics_view = fastpath.REFUSAL_VIEWS[refusal]  # type: ignore[attr-defined]  # read by the metrics
                    language = language_for(
                        request.COOKIES.get(settings.LANGUAGE_COOKIE_NAME), request.META.get("HTTP_ACCEPT_LANGUAGE", "")
                    )
                    return fastpath.refusal_response(code, language)
        return self.get_response(request)

    @staticmethod
    def _sale_id(request: HttpRequest) -> int | None:
        path = request.path_info
        if fastpath.PAGE_BUY.match(path):
            return positive_int(request.POST.get("goodsId"))
        match = fastpath.API_BUY.match(path)
        return positive_int(match.group(1)) if match else None
