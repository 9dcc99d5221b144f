"""The tickets the bench's shoppers poll with: the result ticket a queued buy's answer sets, and
the wait ticket a draw's waiting list sets on a listed shopper's first poll.

A real buy over HTTP sets the `seckill_result` cookie (seckill.tickets) on its answer, and the
generators keep no cookies. The bench's shoppers buy through the gate's service instead
(lab.bench.reserve, the drain's way: the captchas are not the figure), so each one's ticket is
made here by the shop's own `ticket_set`, from the session the shopper holds, signed with the
deployment's SECRET_KEY, as the web process would have made it in answer to that buy.

The buy over HTTP also slid the session's expiry (users.middleware), so its polls in the next
minute re-save nothing: the session is marked slid now too. Without it, each shopper's first
poll goes to Django, which re-saves the session and sets its cookie, and the fast path does not
learn its headers from an answer that sets a cookie: the polls measured would not be the
opening's.
"""

from __future__ import annotations

import time

from django.conf import settings
from django.http import HttpRequest, HttpResponse
from django.test.utils import override_settings

from lab.shopper import Shopper
from seckill.tickets import ticket_set
from users.middleware import REFRESHED_AT
from users.sessions import SessionStore
from waitingroom.wait_ticket import wait_cookie, wait_signed


def tickets_mint(shoppers: list[Shopper], *, sale_id: int, secret_key: str) -> dict[int, str]:
    """User id -> the Cookie header pair (`seckill_result=...`) of that shopper's ticket for
    `sale_id`, its session marked slid now. A shopper whose session the shop would not make a
    ticket for (gone, revoked) has none. A ticket lives SECKILL_RESULT_TICKET_SECONDS, the mark
    SESSION_SLIDING_REFRESH_SECONDS: make them just before they are used."""
    made: dict[int, str] = {}
    name = settings.SECKILL_RESULT_TICKET_COOKIE
    with override_settings(SECRET_KEY=secret_key):
        for shopper in shoppers:
            request = HttpRequest()
            request.session = session = SessionStore(shopper.session)
            if session.get(REFRESHED_AT) is not None:  # a session that loads (not revoked)
                session[REFRESHED_AT] = int(time.time())
                session.save()
            response = HttpResponse()
            ticket_set(response, request=request, user_id=shopper.user_id, sale_id=sale_id)
            morsel = response.cookies.get(name)
            if morsel is not None:
                made[shopper.user_id] = f"{name}={morsel.coded_value}"
    return made


def wait_tickets_mint(shoppers: list[Shopper], *, sale_id: int, secret_key: str) -> dict[int, str]:
    """User id -> the Cookie header pair (`seckill_wait_<sale>=...`) of the wait ticket the shop
    sets on a listed shopper's first waiting-list poll (waitingroom.wait_ticket), bound to their
    session and signed with the deployment's SECRET_KEY: what their page's later polls carry."""
    with override_settings(SECRET_KEY=secret_key):
        return {
            shopper.user_id: f"{wait_cookie(sale_id)}="
            + wait_signed(user_id=shopper.user_id, sale_id=sale_id, session_key=shopper.session)
            for shopper in shoppers
        }
