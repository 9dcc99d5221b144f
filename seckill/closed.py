"""The closed-sale rule: a buy for a sale this process knows is sold out (entries closed, after
a draw sale's draw), not started or ended is refused to anyone, with the same bytes everywhere.

`closed_refusal` is where that is decided before reserve.lua (which has the last word, by Redis's
clock and stock): the fast path below Django (seckill.fastpath), SoldOutMiddleware and the gate
all ask it. `refusal_response` is the answer every one of them gives, the edge's too.
"""

from django.http import HttpResponse
from django.utils import translation

from sales import sale_state
from seckill_site.codes import EnvelopeCode
from seckill_site.http import fail

__all__ = ["PUBLIC_CODES", "REFUSAL_VIEWS", "closed_refusal", "refusal_response"]

# The codes of the public refusals: a buy view's answer with one leaves as refusal_response.
PUBLIC_CODES = frozenset(refusal.code for refusal in sale_state.PUBLIC_REFUSALS)

# The metrics' view label of a refusal answered before any URL is resolved.
REFUSAL_VIEWS = {
    refusal: f"<{refusal.name.lower().replace('_', ' ')} before routing>" for refusal in sale_state.Refusal
}


def closed_refusal(sale_id: int, *, ask: bool) -> sale_state.Refusal | None:
    """SOLD_OUT (ENTRIES_CLOSED after a draw sale's draw), NOT_STARTED or ENDED when this
    process knows the sale is closed to every buyer; None when it may be open.

    Without `ask` nothing reaches the network (below Django: a stale window copy answers None);
    with it a stale copy is read again from Redis, whose failures propagate."""
    return sale_state.refusal_known(sale_id, ask=ask)


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
