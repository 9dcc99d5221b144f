"""The orders app's envelope codes (seckill_site.codes: unique across every app, never renumbered)."""

from django.utils.translation import gettext_noop as _

from seckill_site.codes import EnvelopeCode


class OrderCode(EnvelopeCode):
    ORDER_NOT_FOUND = (500600, _("order not found"), 404)
    ORDER_STATE = (500601, _("the order cannot do that in its current state"), 409)
    ADDRESS_NEEDED = (500602, _("choose a shipping address from your address book"), 400)
    PAYMENT_UNAVAILABLE = (500603, _("the payment did not go through; nothing was charged"), 409)
