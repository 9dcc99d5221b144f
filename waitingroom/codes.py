"""The waiting room's envelope codes (seckill_site.codes: unique across every app, never
renumbered)."""

from django.utils.translation import gettext_noop as _

from seckill_site.codes import EnvelopeCode


class WaitingCode(EnvelopeCode):
    # The buy, the captcha and the path of a sale whose room is on, asked without a pass:
    # `data` says where the shopper stands and where to wait.
    IN_WAITING_ROOM = (500700, _("you are in the waiting room: wait for your turn"), 429)
