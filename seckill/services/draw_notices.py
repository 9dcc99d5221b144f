"""A draw's winners are texted once each (users.notices, "draw-won:<sale>:<user>"): "you won,
pay within N minutes". Off the draw's path: sale_draw publishes `seckill.draw_winners_notify`
once the draw is applied and goes on whatever the broker says; beat's sweep sends what a lost
task or a dead sender left, while the winners' time to pay (SECKILL_ORDER_TTL) lasts. Nothing
here changes a draw or a reservation."""

import logging
from datetime import datetime, timedelta
from typing import cast

from django.conf import settings
from django.utils import timezone, translation
from django.utils.translation import gettext as _

from sales.models import SaleDraw
from users import notices
from users.models import Notice, NoticeKind, User

logger = logging.getLogger(__name__)


def notice_key(sale_id: int, user_id: int) -> str:
    return f"draw-won:{sale_id}:{user_id}"


def _text(draw: SaleDraw, language: str) -> str:
    with translation.override(language):
        return _("You won the draw for %(name)s: pay within %(minutes)s minutes at %(link)s") % {
            "name": draw.sale.goods.name,
            "minutes": max(1, settings.SECKILL_ORDER_TTL // 60),
            "link": f"{settings.SHOP_PUBLIC_URL}/goods/detail/{draw.sale_id}",
        }


def draw_winners_notify(*, sale_id: int) -> int:
    """Text each winner of the sale's applied draw who was not texted yet; how many were sent."""
    draw = SaleDraw.objects.filter(sale_id=sale_id, applied_at__isnull=False).select_related("sale__goods").first()
    if draw is None:
        return 0
    wanted = {user_id: notice_key(sale_id, user_id) for user_id in draw.winner_ids}
    done = set(Notice.objects.filter(key__in=wanted.values(), status__in=notices.DONE).values_list("key", flat=True))
    users = User.objects.in_bulk([user_id for user_id, key in wanted.items() if key not in done])
    applied_at = cast(datetime, draw.applied_at)  # the query asked for an applied draw
    worth_until = applied_at + timedelta(seconds=settings.SECKILL_ORDER_TTL)  # the winners' time to pay
    sent = 0
    for user_id in sorted(users):
        user = users[user_id]
        # One bad winner never holds up the others: the sweep tries them again.
        try:
            text = _text(draw, notices.notice_language(user))
            status = notices.notice_send(
                user=user, kind=NoticeKind.DRAW_WON, key=wanted[user_id], text=text, worth_until=worth_until
            )
        except Exception:
            logger.exception("draw-won notice of sale %s for user %s failed", sale_id, user_id)
            continue
        if status == notices.WAITING:
            break  # the hour has no room for notices: the sweep tries the rest again
        sent += status == "sent"
    return sent


def draw_winners_sweep() -> int:
    """Beat's backstop: the winners of draws applied within their time to pay, not texted yet."""
    since = timezone.now() - timedelta(seconds=settings.SECKILL_ORDER_TTL)
    sale_ids = SaleDraw.objects.filter(applied_at__gte=since).values_list("sale_id", flat=True)
    return sum(draw_winners_notify(sale_id=sale_id) for sale_id in sale_ids)
