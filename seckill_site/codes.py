"""Error codes of the JSON envelope `{"code", "msg", "data"}`."""

from enum import Enum

from django.utils.translation import gettext, gettext_noop

_ = gettext_noop  # marked for translation here, translated when answered (Code.msg)


class Code(Enum):
    """Every answer's code. A code is a client's contract: each is unique, so that a client can
    tell one answer from another (a retry from an end), and one in use is never renumbered or
    reused (`seckill_site/tests/test_codes.py`)."""

    # (code, default message, HTTP status)
    SUCCESS = (0, "success", 200)
    BAD_REQUEST = (500101, _("bad request"), 400)
    NOT_LOGGED_IN = (500210, _("please log in first"), 401)
    FORBIDDEN = (500211, _("forbidden"), 403)
    NOT_FOUND = (500404, _("not found"), 404)
    METHOD_NOT_ALLOWED = (500405, _("method not allowed"), 405)
    TOO_LARGE = (500413, _("the request is too large"), 413)
    TOO_MANY_REQUESTS = (500429, _("too many requests, slow down"), 429)
    SALE_LIMIT = (500430, _("too many tries for this sale, wait a minute"), 429)
    SERVER_BUSY = (500503, _("the shop is busy, retry in a moment"), 503)
    SERVER_ERROR = (500100, _("server error"), 500)

    LOGIN_FAILED = (500215, _("wrong mobile number or password"), 400)

    SOLD_OUT = (500500, _("sold out"), 200)
    ALREADY_BOUGHT = (500501, _("you already bought this item"), 200)
    NOT_STARTED = (500502, _("the sale has not started yet"), 200)
    ENDED = (500510, _("the sale has ended"), 200)
    PATH_INVALID = (500504, _("invalid or expired request, solve the captcha again"), 403)
    CAPTCHA_WRONG = (500505, _("wrong or expired captcha answer: try a new one"), 400)
    TRY_AGAIN = (500506, _("could not queue your request, please try again"), 503)
    # A draw sale (docs/draw.md): entered in its opening window, then drawn.
    ENTERED = (500507, _("you are in the draw"), 200)
    DRAW_PENDING = (500508, _("the draw is being made, try again in a moment"), 200)
    # Sold out after the draw: the shopper missed the entries, and is told so.
    ENTRIES_CLOSED = (500509, _("entries to this draw have closed, and no units are left"), 200)

    ORDER_NOT_FOUND = (500600, _("order not found"), 404)
    ORDER_STATE = (500601, _("the order cannot do that in its current state"), 409)
    ADDRESS_NEEDED = (500602, _("choose a shipping address from your address book"), 400)
    PAYMENT_UNAVAILABLE = (500603, _("the payment did not go through; nothing was charged"), 409)
    ADDRESS_BOOK_FULL = (500610, _("your address book is full; delete an address first"), 409)
    REMINDER_REFUSED = (500620, _("this sale takes no reminder now"), 409)

    @property
    def code(self) -> int:
        return self.value[0]

    @property
    def msg(self) -> str:
        return gettext(self.value[1])

    @property
    def status(self) -> int:
        return self.value[2]
