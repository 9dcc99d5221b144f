"""The steps a seckill page and its API share once each has parsed its request and checked who
asks. Each returns a seckill_site.http.Answer, so both give the same codes, messages and headers.
"""

from datetime import UTC, datetime

from django.utils.translation import gettext as _

from sales.codes import SaleCode
from sales.selectors import sale_get
from seckill import captcha as captcha_module
from seckill.codes import BuyCode
from seckill.observe import attempt_answered
from seckill.services import gate, paths
from seckill_site.codes import Code
from seckill_site.http import Answer, parse_int
from seckill_site.templatetags.times import when

NO_SUCH_SALE = Answer(Code.NOT_FOUND, msg=_("no such sale"))


def captcha_answer(raw) -> int | None:
    """The captcha answer from a query string or a JSON body, or None when it is not one."""
    return parse_int(raw, minimum=captcha_module.ANSWER_MIN, maximum=captcha_module.ANSWER_MAX)


def sale_limit_message(error: paths.SaleLimitReached) -> str:
    if error.action == "captcha":
        message = _("At most %(limit)s new captchas a minute for this sale: try again in %(seconds)s s.")
    else:
        message = _("At most %(limit)s answers a minute for this sale: try again in %(seconds)s s.")
    return message % {"limit": error.limit, "seconds": error.retry_after}


def sale_limited(error: paths.SaleLimitReached) -> Answer:
    return Answer(
        BuyCode.SALE_LIMIT,
        msg=sale_limit_message(error),
        data={"retryAfter": error.retry_after},
        headers={"Retry-After": str(error.retry_after)},
    )


def captcha(*, user_id: int, sale_id: int, spoken: bool = False) -> Answer:
    """A new captcha for the sale, drawn (PNG) or spoken (WAV). Only the per-sale limit counts: a
    per-user limit across all sales would lock a shopper out of every sale for retrying one."""
    if sale_get(sale_id=sale_id) is None:
        return NO_SUCH_SALE
    create = paths.captcha_audio_create if spoken else paths.captcha_create
    try:
        media = create(user_id=user_id, sale_id=sale_id)
    except paths.SaleLimitReached as error:
        return sale_limited(error)
    return Answer(
        body=media, content_type="audio/wav" if spoken else "image/png", headers={"Cache-Control": "no-store"}
    )


def path(*, user_id: int, sale_id: int, raw_answer) -> Answer:
    """The captcha's answer exchanged for a one-time buy path (the data: the path itself)."""
    answer = captcha_answer(raw_answer)
    if answer is None:
        return Answer(Code.BAD_REQUEST, msg=_("verifyCode must be a whole number"))
    if sale_get(sale_id=sale_id) is None:
        return NO_SUCH_SALE
    try:
        created = paths.path_create(user_id=user_id, sale_id=sale_id, answer=answer)
    except paths.SaleLimitReached as error:
        return sale_limited(error)
    if created is None:
        return Answer(BuyCode.CAPTCHA_WRONG)
    return Answer(data=created)


def entered_message(draw_at: float) -> str:
    """ "You are in the draw; results at <when>", in the shop's time zone."""
    return _("You are in the draw; results at %(time)s.") % {"time": when(datetime.fromtimestamp(draw_at, tz=UTC))}


def buy(*, user_id: int, sale_id: int, path: str) -> Answer:
    """One buy through the gate, counted and logged (seckill.observe): queued, entered in the
    sale's draw, or the gate's refusal with its Retry-After."""
    attempt = gate.seckill_attempt(user_id=user_id, sale_id=sale_id, path=path)
    attempt_answered(sale_id=sale_id, code=attempt.code, reservation=attempt.request_id)
    if attempt.code is Code.SUCCESS:
        return Answer(data={"status": "queued", "requestId": attempt.request_id})
    if attempt.code is SaleCode.ENTERED:
        return Answer(
            SaleCode.ENTERED,
            msg=entered_message(attempt.draw_at),
            data={"status": "entered", "drawAt": attempt.draw_at},
        )
    headers = {"Retry-After": str(attempt.retry_after)} if attempt.retry_after else {}
    return Answer(attempt.code, headers=headers)
