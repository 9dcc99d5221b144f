"""Seckill endpoints (seed 000 contract). Thin: parse, check the session, call a service.

None of these load the user from PostgreSQL: the user id comes from the Redis session.
"""

from django.contrib.auth import SESSION_KEY
from django.http import HttpRequest, HttpResponse
from django.utils.translation import gettext as _
from django_ratelimit.core import is_ratelimited

from goods.selectors import sale_get
from seckill import captcha, selectors, services
from seckill.observe import attempt_answered
from seckill_site.codes import Code
from seckill_site.http import allow, fail, ok, parse_int, positive_int
from seckill_site.ratelimit import rate_period

# Seed 000 @AccessLimit(seconds = 5, maxAccessCount = 5): per user, per endpoint.
SECKILL_RATE = "5/5s"
CAPTCHA_RATE = "20/m"


def session_user_id(request: HttpRequest) -> int | None:
    raw = request.session.get(SESSION_KEY)
    return int(raw) if raw is not None else None


def captcha_answer(raw) -> int | None:
    """The captcha answer from a query string or a JSON body, or None when it is not one."""
    return parse_int(raw, minimum=captcha.ANSWER_MIN, maximum=captcha.ANSWER_MAX)


def _rate_key(group: str, request: HttpRequest) -> str:
    return str(request.session.get(SESSION_KEY))


def _limited(request: HttpRequest, group: str) -> bool:
    return is_ratelimited(request, group=group, key=_rate_key, rate=SECKILL_RATE, increment=True)


def _too_many(rate: str) -> HttpResponse:
    """429 with Retry-After, like every other limit: the rate's whole period, which the fixed
    window a refusal counted in never outlasts (the API's throttles answer the same)."""
    response = fail(Code.TOO_MANY_REQUESTS)
    response["Retry-After"] = str(rate_period(rate))
    return response


def sale_limit_message(error: services.SaleLimitReached) -> str:
    if error.action == "captcha":
        message = _("at most %(limit)s captchas a minute for this sale: try again in %(seconds)s s")
    else:
        message = _("at most %(limit)s answers a minute for this sale: try again in %(seconds)s s")
    return message % {"limit": error.limit, "seconds": error.retry_after}


def _sale_limited(error: services.SaleLimitReached) -> HttpResponse:
    response = fail(Code.SALE_LIMIT, sale_limit_message(error), data={"retryAfter": error.retry_after})
    response["Retry-After"] = str(error.retry_after)
    return response


def _sale_id(request: HttpRequest) -> int | None:
    return positive_int(request.GET.get("goodsId") if request.method == "GET" else request.POST.get("goodsId"))


@allow("GET")
def verify_code(request: HttpRequest) -> HttpResponse:
    user_id = session_user_id(request)
    if user_id is None:
        return fail(Code.NOT_LOGGED_IN)
    sale_id = _sale_id(request)
    if sale_id is None:
        return fail(Code.BAD_REQUEST, _("goodsId must be a positive integer"))
    if sale_get(sale_id=sale_id) is None:
        return fail(Code.NOT_FOUND, _("no such sale"))
    if is_ratelimited(request, group="seckill.captcha", key=_rate_key, rate=CAPTCHA_RATE, increment=True):
        return _too_many(CAPTCHA_RATE)
    try:
        image = services.captcha_create(user_id=user_id, sale_id=sale_id)
    except services.SaleLimitReached as error:
        return _sale_limited(error)
    response = HttpResponse(image, content_type="image/png")
    response["Cache-Control"] = "no-store"
    return response


@allow("GET")
def seckill_path(request: HttpRequest) -> HttpResponse:
    user_id = session_user_id(request)
    if user_id is None:
        return fail(Code.NOT_LOGGED_IN)
    if _limited(request, "seckill.path"):
        return _too_many(SECKILL_RATE)
    sale_id = _sale_id(request)
    if sale_id is None:
        return fail(Code.BAD_REQUEST, _("goodsId must be a positive integer"))
    answer = captcha_answer(request.GET.get("verifyCode"))
    if answer is None:
        return fail(Code.BAD_REQUEST, _("verifyCode must be a whole number"))
    if sale_get(sale_id=sale_id) is None:
        return fail(Code.NOT_FOUND, _("no such sale"))
    try:
        path = services.path_create(user_id=user_id, sale_id=sale_id, answer=answer)
    except services.SaleLimitReached as error:
        return _sale_limited(error)
    if path is None:
        return fail(Code.CAPTCHA_WRONG)
    return ok(path)


@allow("POST")
def do_seckill(request: HttpRequest, path: str) -> HttpResponse:
    user_id = session_user_id(request)
    if user_id is None:
        return fail(Code.NOT_LOGGED_IN)
    sale_id = _sale_id(request)
    if sale_id is None:
        return fail(Code.BAD_REQUEST, _("goodsId must be a positive integer"))
    attempt = services.seckill_attempt(user_id=user_id, sale_id=sale_id, path=path)
    attempt_answered(sale_id=sale_id, code=attempt.code, reservation=attempt.request_id)
    if attempt.code is Code.SUCCESS:
        return ok({"status": "queued", "requestId": attempt.request_id})
    response = fail(attempt.code)
    if attempt.retry_after:
        response["Retry-After"] = str(attempt.retry_after)
    return response


@allow("GET")
def seckill_result(request: HttpRequest) -> HttpResponse:
    user_id = session_user_id(request)
    if user_id is None:
        return fail(Code.NOT_LOGGED_IN)
    sale_id = _sale_id(request)
    if sale_id is None:
        return fail(Code.BAD_REQUEST, _("goodsId must be a positive integer"))
    return ok(selectors.seckill_result(user_id=user_id, sale_id=sale_id))
