"""`SoldOutMiddleware`: a buy for a sale this process knows is sold out, not started or ended
is refused first in the stack, before the session, CSRF or locale middleware.

The rule is sales.sale_state.refusal_known, the one the gate and seckill.fastpath ask too (the
gate's docstring says why its answer may be given to anyone), with the bytes seckill.fastpath
gives below Django. This covers what the fast path leaves to Django and every other way in
(runserver, the test client, ASGI).

The same refusal given further in, by the page's or the API's buy view when this process's
copies knew nothing or were old (the gate's script answered from Redis), leaves through here
too: the view marks it (`refusal_mark`) and it is given again as `refusal_response`, so that
neither DRF's JSON nor the headers the stack below adds (CSP, Allow, Vary, ...) tell one layer's
answer from another's. Only the cookies Django set on the way (the session's slide) are kept.
"""

from typing import TypeVar

from django.conf import settings
from django.http import HttpRequest, HttpResponseBase

from sales.sale_state import refusal_known
from seckill.fastpath.refusal import PUBLIC_CODES, REFUSAL_VIEWS, refusal_response
from seckill.observe import attempt_answered
from seckill.sale_id import API_BUY, PAGE_BUY, sale_id_read
from seckill_site.codes import EnvelopeCode
from seckill_site.http import positive_int
from seckill_site.locale import language_for
from seckill_site.redis import REDIS_FAILURES

Marked = TypeVar("Marked", bound=HttpResponseBase)


def refusal_mark(response: Marked, code: EnvelopeCode) -> Marked:
    """Mark a buy view's answer with its code: a public refusal leaves as SoldOutMiddleware's."""
    response.seckill_code = code  # type: ignore[attr-defined]
    return response


class SoldOutMiddleware:
    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponseBase:
        sale_id = self._sale_id(request) if request.method == "POST" else None
        if sale_id is None:
            return self.get_response(request)
        try:
            refusal = refusal_known(sale_id, ask=True)
        except REDIS_FAILURES:  # the view meets the outage too, and answers it (a 503)
            refusal = None
        if refusal is not None:
            attempt_answered(sale_id=sale_id, code=refusal.code)  # a counter and log fields
            request.metrics_view = REFUSAL_VIEWS[refusal]  # type: ignore[attr-defined]  # read by the metrics
            return refusal_response(refusal.code, self._language(request))
        response = self.get_response(request)
        marked = getattr(response, "seckill_code", None)
        if marked not in PUBLIC_CODES:
            return response
        answer = refusal_response(marked, self._language(request))
        answer.cookies = response.cookies
        return answer

    @staticmethod
    def _language(request: HttpRequest) -> str:
        return language_for(
            request.COOKIES.get(settings.LANGUAGE_COOKIE_NAME), request.META.get("HTTP_ACCEPT_LANGUAGE", "")
        )

    @staticmethod
    def _sale_id(request: HttpRequest) -> int | None:
        path = request.path_info
        if PAGE_BUY.match(path):
            return sale_id_read(request.POST)  # a bad one: the view answers its 400
        match = API_BUY.match(path)
        return positive_int(match.group(1)) if match else None
