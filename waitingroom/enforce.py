"""The pass, required: a sale whose room is on sells, shows its captcha and gives its path only
to a shopper holding a valid pass for it (waitingroom.passes), and to nobody while the operator
queues everyone. The fast path checks it below Django (seckill.fastpath.waiting); the views
check it again here, for every way in the fast path does not see."""

from __future__ import annotations

import time

from django.conf import settings
from django.http import HttpRequest, HttpResponse

from seckill_site.locale import language_for
from seckill_site.redis import client
from waitingroom import keys
from waitingroom.answers import answer_kind, refusal_response
from waitingroom.passes import pass_cookie, pass_read
from waitingroom.queue import ADMITTED, Place, pass_issue, place
from waitingroom.room import Room, room_read

__all__ = ["pass_holds", "pass_refusal"]


def pass_holds(room: Room, *, sale_id: int, value: str | None, session_key: str | None, user_id: int | None) -> bool:
    """May this request pass the room: no room, or a valid pass for the sale and session (and
    for `user_id` when given), and the operator is not queueing everyone."""
    if not room.on:
        return True
    if room.queue_all:
        return False
    held = pass_read(value, sale_id=sale_id, session_key=session_key, seconds=room.pass_seconds)
    return held is not None and (user_id is None or held.user_id == user_id)


def _admitted_without_session(room: Room, sale_id: int, user_id: int, where: Place | None = None) -> bool:
    """An API client with a token and no session cannot carry a pass: admitted in line and
    within the pass's life since it took it (wr_issue logged it) counts the same. Given its
    place `where`, one admitted that has not taken its pass takes it now, as a browser's
    status poll would: its first ask once admitted starts the pass's life."""
    started = client().zscore(keys.admitted_log(sale_id), user_id)
    if started is None and where is not None and where.state == ADMITTED:
        started = pass_issue(sale_id, user_id)
    return started is not None and 0 <= time.time() - started <= room.pass_seconds


def pass_refusal(request: HttpRequest, *, sale_id: int, user_id: int) -> HttpResponse | None:
    """None when the request may go on; else the waiting room's answer, the shopper joined in
    line (landing on a buy without a pass is arriving at the room)."""
    room = room_read(sale_id)
    if not room.on:
        return None
    session = getattr(request, "session", None)
    session_key = session.session_key if session is not None else None
    value = request.COOKIES.get(pass_cookie(sale_id))
    if pass_holds(room, sale_id=sale_id, value=value, session_key=session_key, user_id=user_id):
        return None
    if session_key is None and not room.queue_all and _admitted_without_session(room, sale_id, user_id):
        return None
    where: Place | None = place(sale_id, user_id)
    if session_key is None and not room.queue_all and _admitted_without_session(room, sale_id, user_id, where):
        return None
    language = language_for(
        request.COOKIES.get(settings.LANGUAGE_COOKIE_NAME), request.headers.get("Accept-Language", "")
    )
    headers = {name.lower(): value for name, value in request.headers.items()}
    return refusal_response(answer_kind(request.path_info, headers), where, sale_id, language)
