"""The closed-sale refusal: a buy for a sale this process knows is sold out (entries closed,
after a draw sale's draw), not started or ended is refused to anyone, with the same bytes
everywhere.

The rule is sales.sale_state.refusal_known, asked before reserve.lua (which has the last word,
by Redis's clock and stock) by the fast path below Django (ClosedSaleRefusal, not asking Redis),
by seckill.middleware.SoldOutMiddleware and by the gate. `refusal_response` is the answer every
one of them gives, the edge's too."""

from __future__ import annotations

import io
import time
from collections.abc import Callable

from django.conf import settings
from django.http import HttpResponse, QueryDict
from django.utils import translation

from sales import sale_state
from sales.sale_state import refusal_known
from seckill.fastpath.wsgi import language_chosen, plain_id, request_id, wsgi_status
from seckill.sale_id import API_BUY, PAGE_BUY, sale_id_plain, sale_id_read
from seckill_site.codes import EnvelopeCode
from seckill_site.http import fail
from seckill_site.locale import language_for
from seckill_site.logs import REQUEST_ID_HEADER
from seckill_site.metrics import ThreadCounts

# The codes of the public refusals: a buy view's answer with one leaves as refusal_response.
PUBLIC_CODES = frozenset(refusal.code for refusal in sale_state.PUBLIC_REFUSALS)

# The metrics' view label of a refusal answered before any URL is resolved.
REFUSAL_VIEWS = {
    refusal: f"<{refusal.name.lower().replace('_', ' ')} before routing>" for refusal in sale_state.Refusal
}


_refusal_bodies: dict[tuple[EnvelopeCode, str], bytes] = {}


def refusal_response(code: EnvelopeCode, language: str) -> HttpResponse:
    """The gate's answer `code` in `language`, as Django and the fast path both give it."""
    body = _refusal_bodies.get((code, language))
    if body is None:
        with translation.override(language):
            body = _refusal_bodies[(code, language)] = fail(code).content
    response = HttpResponse(body, content_type="application/json", status=code.status)
    response["Content-Language"] = language
    # As CommonMiddleware gives the views' answers, which this one stands for: never chunked.
    response["Content-Length"] = str(len(body))
    return response


# A buy form is `goodsId=<id>` and maybe a csrf token; Django reads anything larger its own way.
FORM_BYTES_MAX = 1024
FORM = "application/x-www-form-urlencoded"


class ClosedSaleRefusal:
    """Answers a page's or the API's buy of a closed sale; anything else is None."""

    def __init__(self, counts: ThreadCounts) -> None:
        self.counts = counts
        self.limit = settings.SECKILL_MAX_REQUEST_BYTES
        self.language_cookie = settings.LANGUAGE_COOKIE_NAME
        self._answers: dict[tuple[EnvelopeCode, str], tuple[str, list[tuple[str, str]], bytes]] = {}

    def __call__(self, environ: dict, start_response: Callable, started: float) -> list[bytes] | None:
        if environ.get("REQUEST_METHOD") != "POST":
            return None
        path = environ.get("PATH_INFO", "")
        page = PAGE_BUY.match(path)
        api = None if page else API_BUY.match(path)
        if page is None and api is None:
            return None
        length = _length(environ)
        if length is None or length > self.limit:
            return None  # Django refuses it (413) or reads it its way
        sale_id = _form_sale_id(environ, length) if page else plain_id(api.group(1))  # type: ignore[union-attr]
        if sale_id is None:
            return None
        refusal = refusal_known(sale_id, ask=False)
        if refusal is None:
            return None
        code = refusal.code
        language = language_for(
            language_chosen(environ.get("HTTP_COOKIE", ""), self.language_cookie),
            environ.get("HTTP_ACCEPT_LANGUAGE", ""),
        )
        answer = self._answers.get((code, language))
        if answer is None:
            response = refusal_response(code, language)
            answer = self._answers[(code, language)] = (
                wsgi_status(response),
                list(response.items()),
                response.content,
            )
        status, headers, body = answer
        start_response(status, [*headers, (REQUEST_ID_HEADER, request_id(environ))])
        self.counts.add((REFUSAL_VIEWS[refusal], "POST", status[:3], code), REFUSAL_VIEWS[refusal], "POST", status[:3],
                        time.perf_counter() - started)  # fmt: skip
        return [body]


def _length(environ: dict) -> int | None:
    raw = environ.get("CONTENT_LENGTH") or "0"
    return int(raw) if raw.isdigit() else None  # anything odd: Django decides


def _form_sale_id(environ: dict, length: int) -> int | None:
    """The form's sale id as request.POST reads it, or None for Django to read; the body is put back."""
    content_type = environ.get("CONTENT_TYPE", "")
    mime, _sep, params = content_type.partition(";")
    if mime.strip().lower() != FORM or (params.strip() and params.strip().lower() != "charset=utf-8"):
        return None
    if not 0 < length <= FORM_BYTES_MAX:
        return None
    body = environ["wsgi.input"].read(length)
    environ["wsgi.input"] = io.BytesIO(body)
    if len(body) != length:
        return None
    sale_id = sale_id_plain(body)
    if sale_id is not None:
        return sale_id
    # Django's own parser for anything else (a csrf token beside it, repeated fields).
    try:
        return sale_id_read(QueryDict(body, encoding="utf-8"))
    except Exception:  # whatever Django would say about a broken form, it says it itself
        return None
