"""What the waiting room answers, built once here for the fast path and Django alike: the
status poll's JSON and the refusal of a buy, captcha or path asked without a pass, in the
three forms a client understands (JSON for the API and the page's fetches, a 303 to the waiting
page for a browser's plain form, 503 with Retry-After for anything else)."""

from __future__ import annotations

import json
from collections.abc import Mapping

from django.conf import settings
from django.http import HttpResponse, HttpResponseRedirect
from django.utils import translation
from django.utils.translation import gettext as _

from seckill_site.http import fail
from waitingroom.codes import WaitingCode
from waitingroom.queue import WAITING, Place

__all__ = [
    "REFRESH_SECONDS",
    "answer_kind",
    "refresh_seconds",
    "refusal_data",
    "refusal_response",
    "status_body",
    "waiting_room_url",
]

# How often the waiting page asks for its status: the figures change no faster that matters.
REFRESH_SECONDS = 5
# The soonest it asks again when the shopper's turn is nearer than that.
REFRESH_MIN_SECONDS = 1
# A crawler's Retry-After when nobody can say how long the wait is.
RETRY_AFTER_DEFAULT = 60

JSON, PAGE, OTHER = "json", "page", "other"


def waiting_room_url(sale_id: int, language: str | None = None) -> str:
    """The waiting page of the sale, in `language`'s URL (the default language's has no prefix)."""
    prefix = "" if not language or language == settings.LANGUAGE_CODE else f"/{language}"
    return f"{prefix}/waiting-room/{sale_id}"


def refresh_seconds(place: Place) -> int:
    """When the waiting page asks again: REFRESH_SECONDS, or at the shopper's estimated turn
    when that comes sooner (never sooner than REFRESH_MIN_SECONDS). A shopper then learns of
    their turn as it comes, and the head of a line, who arrived together and so poll together,
    is let through one at a time at the room's pace rather than all at their shared next poll."""
    if place.state == WAITING and place.eta_seconds is not None:
        return max(REFRESH_MIN_SECONDS, min(REFRESH_SECONDS, place.eta_seconds))
    return REFRESH_SECONDS


def status_data(place: Place, *, pass_until: int | None = None) -> dict:
    """The status poll's `data`: the shopper's state and place, and the room's public figures."""
    return {
        "sale": place.sale_id,
        "state": place.state,
        "position": place.position,
        "aheadOfYou": place.ahead,
        "etaSeconds": place.eta_seconds,
        "head": place.head,
        "tail": place.tail,
        "ratePerMinute": round(place.rate_per_minute, 2),
        "passUntil": pass_until,
        "refreshSeconds": refresh_seconds(place),
    }


def status_body(place: Place, *, pass_until: int | None = None) -> bytes:
    """The status poll's whole answer, the same bytes whichever layer gives it."""
    envelope = {"code": 0, "msg": "success", "data": status_data(place, pass_until=pass_until)}
    return json.dumps(envelope, separators=(", ", ": ")).encode()


def answer_kind(path: str, headers: Mapping[str, str]) -> str:
    """JSON for the API and a page's scripts, PAGE for a browser navigating (a plain form's
    POST, a link), OTHER for the rest (a crawler), from the path and the request's headers
    (lower-case names, as WSGI's HTTP_* without the prefix)."""
    accept = headers.get("accept", "")
    if path.startswith("/api/") or "application/json" in accept or headers.get("x-requested-with"):
        return JSON
    mode = headers.get("sec-fetch-mode", "")
    if mode in ("cors", "same-origin") and headers.get("sec-fetch-dest", "empty") == "empty":
        return JSON
    if mode == "navigate" or "text/html" in accept:
        return PAGE
    return OTHER


def refusal_data(place: Place | None, sale_id: int, language: str) -> dict:
    return {
        "position": place.position if place else None,
        "aheadOfYou": place.ahead if place else None,
        "etaSeconds": place.eta_seconds if place else None,
        "waitingRoomUrl": waiting_room_url(sale_id, language),
    }


def _message(place: Place | None) -> str:
    if place is None or place.position is None:
        return WaitingCode.IN_WAITING_ROOM.msg
    if place.eta_seconds is None:
        return _("You are in the waiting room: #%(position)s in line.") % {"position": place.position}
    minutes = max(1, -(-place.eta_seconds // 60))
    return _("You are in the waiting room: #%(position)s in line, about %(minutes)s min.") % {
        "position": place.position,
        "minutes": minutes,
    }


def refusal_response(kind: str, place: Place | None, sale_id: int, language: str) -> HttpResponse:
    """The refusal of a request that needs a pass, in `kind`'s form and `language`."""
    url = waiting_room_url(sale_id, language)
    eta = place.eta_seconds if place else None
    if kind == PAGE:
        response: HttpResponse = HttpResponseRedirect(url, status=303)
        response["Content-Language"] = language
        return response
    if kind == OTHER:
        with translation.override(language):
            response = HttpResponse(_("The shop is letting shoppers in in turn: try again later.") + "\n",
                                    status=503, content_type="text/plain; charset=utf-8")  # fmt: skip
        response["Retry-After"] = str(max(REFRESH_SECONDS, eta or RETRY_AFTER_DEFAULT))
        response["Content-Language"] = language
        return response
    with translation.override(language):
        response = fail(WaitingCode.IN_WAITING_ROOM, _message(place), data=refusal_data(place, sale_id, language))
    response["Retry-After"] = str(refresh_seconds(place) if place else REFRESH_SECONDS)
    response["Content-Language"] = language
    response["Cache-Control"] = "no-store"
    return response
