"""The cheapest answer in the shop: a buy request for a sale this process knows is sold out.

At the opening second most buy requests arrive after the stock is gone. Once this process has
seen the sale sell out (its per-process mark, seckill_site.sale_state), such a request is answered
here, first in the middleware stack: before the session is loaded, before CSRF, locale or any
other middleware, with no Redis call. "Sold out" is a public fact (the list page shows it), so
answering it to anyone leaks nothing; the answer is the gate's own, in the shopper's language.
"""

import re

from django.http import HttpRequest, HttpResponse
from django.utils import translation

from seckill.observe import attempt_answered
from seckill_site import sale_state
from seckill_site.codes import Code
from seckill_site.http import fail, positive_int

PAGE_BUY = re.compile(r"^/seckill/[^/]+/doSeckill$")
API_BUY = re.compile(r"^/api/v1/sales/([^/]+)/buy/[^/]+$")


class SoldOutMiddleware:
    def __init__(self, get_response):
        self.get_response = get_response
        self._answers: dict[str, bytes] = {}  # language -> the rendered answer

    def __call__(self, request: HttpRequest) -> HttpResponse:
        if request.method == "POST":
            sale_id = self._sale_id(request)
            if sale_id is not None and sale_state.sold_out_known(sale_id):
                attempt_answered(sale_id=sale_id, code=Code.SOLD_OUT)  # a counter and log fields
                request.metrics_view = "<sold out before routing>"  # type: ignore[attr-defined]  # read by the metrics
                return self._sold_out(request)
        return self.get_response(request)

    @staticmethod
    def _sale_id(request: HttpRequest) -> int | None:
        if PAGE_BUY.match(request.path_info):
            return positive_int(request.POST.get("goodsId"))
        match = API_BUY.match(request.path_info)
        return positive_int(match.group(1)) if match else None

    def _sold_out(self, request: HttpRequest) -> HttpResponse:
        language = translation.get_language_from_request(request)
        body = self._answers.get(language)
        if body is None:
            with translation.override(language):
                body = self._answers[language] = fail(Code.SOLD_OUT).content
        response = HttpResponse(body, content_type="application/json", status=Code.SOLD_OUT.status)
        response["Content-Language"] = language
        return response
