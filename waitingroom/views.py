"""The waiting page (`/waiting-room/<sale>`, in each language's URL) and its status poll
(`/waiting-room/<sale>/status`): joining the line, where the shopper stands, and the pass
handed to an admitted shopper. The poll of a shopper with a wait ticket is answered by the fast
path (seckill.fastpath.waiting) until they are admitted; the pass is issued here."""

from __future__ import annotations

import time
from dataclasses import replace

from django.conf import settings
from django.contrib.auth import SESSION_KEY
from django.http import Http404, HttpRequest, HttpResponse, HttpResponseRedirect
from django.shortcuts import render
from django.urls import reverse
from django.utils.cache import add_never_cache_headers
from django.utils.translation import gettext as _

from sales.selectors import sale_get
from seckill_site.codes import Code
from seckill_site.http import allow, fail, ok, positive_int
from waitingroom.answers import refresh_seconds, status_body, waiting_room_url
from waitingroom.passes import pass_cookie, pass_read, pass_signed
from waitingroom.queue import ADMITTED, EXPIRED, Place, pass_issue, place, shuffle_published
from waitingroom.room import room_read
from waitingroom.wait_ticket import wait_ticket_set


def _user_id(request: HttpRequest) -> int | None:
    return positive_int(request.session.get(SESSION_KEY)) if hasattr(request, "session") else None


def _admitted(request: HttpRequest, found: Place, user_id: int, response: HttpResponse) -> tuple[Place, int | None]:
    """An admitted shopper's pass: set on `response` (its start is the first ask's), or the
    place turned EXPIRED once it has ended. Returns the place and when the pass ends."""
    room = room_read(found.sale_id)
    session_key = request.session.session_key
    started = pass_issue(found.sale_id, user_id)
    until = started + room.pass_seconds
    left = until - int(time.time())
    if left <= 0 or session_key is None:
        return replace(found, state=EXPIRED, ahead=None, eta_seconds=None), None
    value = request.COOKIES.get(pass_cookie(found.sale_id))
    if pass_read(value, sale_id=found.sale_id, session_key=session_key, seconds=room.pass_seconds) is None:
        response.set_cookie(
            pass_cookie(found.sale_id),
            pass_signed(user_id=user_id, sale_id=found.sale_id, session_key=session_key, signed_at=started),
            max_age=left,
            path="/",
            secure=settings.SESSION_COOKIE_SECURE,
            httponly=True,
            samesite="Lax",
        )
    return found, until


def _sale_id(raw: str) -> int:
    """The sale of the URL, or 404: not a positive integer, or no such sale."""
    sale_id = positive_int(raw)
    if sale_id is None or sale_get(sale_id=sale_id) is None:
        raise Http404(_("No such sale."))
    return sale_id


@allow("GET")
def status(request: HttpRequest, sale_id: str) -> HttpResponse:
    """The shopper's place and the room's figures as JSON (waitingroom.answers.status_data);
    an admitted shopper gets their pass with it. Anyone not logged in gets the figures alone."""
    parsed = positive_int(sale_id)
    if parsed is None:
        return fail(Code.BAD_REQUEST, _("the sale must be a positive integer"))
    if sale_get(sale_id=parsed) is None:
        return fail(Code.NOT_FOUND, _("no such sale"))
    user_id = _user_id(request)
    response = HttpResponse(content_type="application/json")
    found = place(parsed, user_id)
    until = None
    if user_id is not None and found.state == ADMITTED:
        found, until = _admitted(request, found, user_id, response)
    if user_id is not None and found.position is not None:
        wait_ticket_set(request, response, sale_id=parsed, user_id=user_id)
    response.content = status_body(found, pass_until=until)
    add_never_cache_headers(response)
    return response


@allow("GET")
def shuffle(request: HttpRequest, sale_id: str) -> HttpResponse:
    """The room's published shuffle (docs/waiting-room.md, "The published shuffle"): the seed's
    SHA-256 before the start; after it the seed and the pre-queue's user ids, from which
    anyone recomputes every place it gave."""
    parsed = positive_int(sale_id)
    if parsed is None:
        return fail(Code.BAD_REQUEST, _("the sale must be a positive integer"))
    if sale_get(sale_id=parsed) is None or not room_read(parsed).on:
        return fail(Code.NOT_FOUND, _("no such sale"))
    return ok(shuffle_published(parsed, ids=True))


@allow("GET")
def waiting_page(request: HttpRequest, sale_id: str) -> HttpResponse:
    """The waiting page: joins the shopper in line and says where they stand, refreshing
    itself; an admitted shopper is sent to the item page with their pass."""
    parsed = _sale_id(sale_id)
    item_url = reverse("item:page", kwargs={"sale_id": parsed})
    room = room_read(parsed)
    if not room.on:
        return HttpResponseRedirect(item_url)
    user_id = _user_id(request)
    response = HttpResponse()
    found = place(parsed, user_id)
    if user_id is not None and found.state == ADMITTED:
        found, until = _admitted(request, found, user_id, response)
        if until is not None:
            redirect = HttpResponseRedirect(item_url, status=303)
            redirect.cookies = response.cookies
            add_never_cache_headers(redirect)
            return redirect
    if user_id is not None and found.position is not None:
        wait_ticket_set(request, response, sale_id=parsed, user_id=user_id)
    sale = sale_get(sale_id=parsed)
    minutes = None if found.eta_seconds is None else max(1, -(-found.eta_seconds // 60))
    page = render(
        request,
        "waitingroom/waiting.html",
        {
            "sale": sale,
            "place": found,
            "minutes": minutes,
            "item_url": item_url,
            "status_url": f"/waiting-room/{parsed}/status",
            "refresh_seconds": refresh_seconds(found),
            "login_url": f"/user/index?next={waiting_room_url(parsed, request.LANGUAGE_CODE)}",
            "logged_in": user_id is not None,
        },
    )
    page.cookies = response.cookies
    add_never_cache_headers(page)
    return page
