"""The buy's own envelope codes, before a sale's state is asked: the captcha and the per-sale
limit (seckill_site.codes: unique across every app, never renumbered). A sale's answers are
sales.codes'."""

from django.utils.translation import gettext_noop as _

from seckill_site.codes import EnvelopeCode


class BuyCode(EnvelopeCode):
    SALE_LIMIT = (500430, _("too many tries for this sale, wait a minute"), 429)
    CAPTCHA_WRONG = (500505, _("wrong or expired captcha answer: try a new one"), 400)
