"""A draw's winners are texted once each (users.notices, "draw-won:<sale>:<user>"): "you won,
pay within N minutes"; so is each entrant a unit that came back is offered to
("draw-offer:<sale>:<user>", orders.reoffer): "it is yours if you pay by HH:MM". Off the
draw's path: sale_draw (and an offer's cancellation) publishes the task once committed and goes
on whatever the broker says; beat's sweep sends what a lost task or a dead sender left, while
the time to pay (SECKILL_ORDER_TTL) lasts. Nothing here changes a draw or a reservation."""

import logging
from datetime import datetime, timedelta
from typing import cast

from django.conf import settings
from django.utils import timezone, translation
from django.utils.translation import gettext as _

from sales.models import OfferOutcome, SaleDraw, SaleDrawOffer
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


def offer_notice_key(sale_id: int, user_id: int) -> str:
    return f"draw-offer:{sale_id}:{user_id}"


def _offer_text(offer: SaleDrawOffer, language: str) -> str:
    sale = offer.draw.sale
    with translation.override(language):
        return _("A unit of %(name)s came back: it is yours if you pay by %(time)s at %(link)s") % {
            "name": sale.goods.name,
            "time": f"{timezone.localtime(offer.expires_at):%H:%M}",
            "link": f"{settings.SHOP_PUBLIC_URL}/goods/detail/{sale.pk}",
        }


def draw_offers_notify(*, sale_id: int) -> int:
    """Text each entrant holding an open offer of the sale who was not texted yet, while their
    time to pay lasts; how many were sent."""
    offers = SaleDrawOffer.objects.filter(
        draw__sale_id=sale_id, outcome=OfferOutcome.OPEN, expires_at__gt=timezone.now()
    ).select_related("draw__sale__goods")
    wanted = {offer.user_id: (offer, offer_notice_key(sale_id, offer.user_id)) for offer in offers}
    keys = [key for _offer, key in wanted.values()]
    done = set(Notice.objects.filter(key__in=keys, status__in=notices.DONE).values_list("key", flat=True))
    users = User.objects.in_bulk([user_id for user_id, (_offer, key) in wanted.items() if key not in done])
    sent = 0
    for user_id in sorted(users):
        offer, key = wanted[user_id]
        try:
            text = _offer_text(offer, notices.notice_language(users[user_id]))
            status = notices.notice_send(
                user=users[user_id], kind=NoticeKind.DRAW_WON, key=key, text=text, worth_until=offer.expires_at
            )
        except Exception:
            logger.exception("draw-offer notice of sale %s for user %s failed", sale_id, user_id)
            continue
        if status == notices.WAITING:
            break
        sent += status == "sent"
    return sent


def draw_winners_sweep() -> int:
    """Beat's backstop: the winners of draws applied within their time to pay, and the entrants
    holding open offers, not texted yet."""
    since = timezone.now() - timedelta(seconds=settings.SECKILL_ORDER_TTL)
    sale_ids = SaleDraw.objects.filter(applied_at__gte=since).values_list("sale_id", flat=True)
    sent = sum(draw_winners_notify(sale_id=sale_id) for sale_id in sale_ids)
    offered = SaleDrawOffer.objects.filter(outcome=OfferOutcome.OPEN, expires_at__gt=timezone.now())
    for sale_id in sorted(set(offered.values_list("draw__sale_id", flat=True))):
        sent += draw_offers_notify(sale_id=sale_id)
    return sent
