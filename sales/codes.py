"""A sale's envelope codes: what a buy, an entry to a draw or a reminder is answered
(seckill_site.codes: unique across every app, never renumbered)."""

from django.utils.translation import gettext_noop as _

from seckill_site.codes import EnvelopeCode


class SaleCode(EnvelopeCode):
    SOLD_OUT = (500500, _("sold out"), 200)
    ALREADY_BOUGHT = (500501, _("you already bought this item"), 200)
    NOT_STARTED = (500502, _("the sale has not started yet"), 200)
    ENDED = (500510, _("the sale has ended"), 200)
    # The sale's scripts check a buy's path (sales.sale_state) and give back a unit no replica
    # confirmed, so these two are the sale's answers too.
    PATH_INVALID = (500504, _("invalid or expired request, solve the captcha again"), 403)
    TRY_AGAIN = (500506, _("could not queue your request, please try again"), 503)
    # A draw sale (docs/draw.md): entered in its opening window, then drawn.
    ENTERED = (500507, _("you are in the draw"), 200)
    DRAW_PENDING = (500508, _("the draw is being made, try again in a moment"), 200)
    # Sold out after the draw: the shopper missed the entries, and is told so.
    ENTRIES_CLOSED = (500509, _("entries to this draw have closed, and no units are left"), 200)
    REMINDER_REFUSED = (500620, _("this sale takes no reminder now"), 409)
