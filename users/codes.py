"""The users app's envelope codes (seckill_site.codes: unique across every app, never renumbered)."""

from django.utils.translation import gettext_noop as _

from seckill_site.codes import EnvelopeCode


class UserCode(EnvelopeCode):
    LOGIN_FAILED = (500215, _("wrong mobile number or password"), 400)
    ADDRESS_BOOK_FULL = (500610, _("your address book is full; delete an address first"), 409)
