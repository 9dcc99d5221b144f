"""The buy's endpoints: captcha, one-time path, buy, result (the item page is seckill.item).
Thin: parse, check the session, call seckill.steps. None loads the user from PostgreSQL: the
user id comes from the Redis session."""

from functools import wraps

from django.contrib.auth import SESSION_KEY
from django.http import HttpRequest, HttpResponse
from django_ratelimit.core import is_ratelimited

from seckill import selectors, steps
from seckill.middleware import refusal_mark
from seckill.sale_id import sale_id_invalid, sale_id_read
from seckill.tickets import ticket_set
from seckill_site.codes import Code
from seckill_site.http import allow, fail, ok, page_answer
from seckill_site.ratelimit import rate_period
from waitingroom.enforce import pass_refusal

# Per user, per endpoint.
SECKILL_RATE = "5/5s"
CAPTCHA_RATE = "20/m"


def session_user_id(request: HttpRequest) -> int | None:
    raw = request.session.get(SESSION_KEY)
    return int(raw) if raw is not None else None


def _rate_key(group: str, request: HttpRequest) -> str:
    return str(request.session.get(SESSION_KEY))


def _limited(request: HttpRequest, group: str) -> bool:
    return is_ratelimited(request, group=group, key=_rate_key, rate=SECKILL_RATE, increment=True)


def _too_many(rate: str) -> HttpResponse:
    """429 with Retry-After the rate's whole period, which the refusal's fixed window never outlasts."""
    response = fail(Code.TOO_MANY_REQUESTS)
    response["Retry-After"] = str(rate_period(rate))
    return response


def _sale_id(request: HttpRequest) -> int | None:
    """The sale a request names in `goodsId` (the query, or the form of a POST); None if malformed."""
    return sale_id_read(request.GET if request.method == "GET" else request.POST)


def _for_shopper_and_sale(*, limit_group: str | None = None, pass_needed: bool = False):
    """Call the view as view(request, user_id, sale_id, ...) unless the request is refused: not
    logged in, over the per-user rate of `limit_group` (counted first), no sale id in `goodsId`,
    or, with `pass_needed`, no waiting room pass where the sale's room is on."""

    def decorate(view):
        @wraps(view)
        def wrapper(request: HttpRequest, *args, **kwargs) -> HttpResponse:
            user_id = session_user_id(request)
            if user_id is None:
                return fail(Code.NOT_LOGGED_IN)
            if limit_group is not None and _limited(request, limit_group):
                return _too_many(SECKILL_RATE)
            sale_id = _sale_id(request)
            if sale_id is None:
                return sale_id_invalid()
            if pass_needed and (refused := pass_refusal(request, sale_id=sale_id, user_id=user_id)) is not None:
                return refused
            return view(request, user_id, sale_id, *args, **kwargs)

        return wrapper

    return decorate


@allow("GET")
@_for_shopper_and_sale(pass_needed=True)
def verify_code(request: HttpRequest, user_id: int, sale_id: int) -> HttpResponse:
    return page_answer(steps.captcha(user_id=user_id, sale_id=sale_id))


@allow("GET")
@_for_shopper_and_sale(pass_needed=True)
def verify_audio(request: HttpRequest, user_id: int, sale_id: int) -> HttpResponse:
    """The captcha spoken (WAV), for shoppers who cannot see the picture; same limit."""
    return page_answer(steps.captcha(user_id=user_id, sale_id=sale_id, spoken=True))


@allow("GET")
@_for_shopper_and_sale(limit_group="seckill.path", pass_needed=True)
def seckill_path(request: HttpRequest, user_id: int, sale_id: int) -> HttpResponse:
    return page_answer(steps.path(user_id=user_id, sale_id=sale_id, raw_answer=request.GET.get("verifyCode")))


@allow("POST")
@_for_shopper_and_sale(pass_needed=True)
def do_seckill(request: HttpRequest, user_id: int, sale_id: int, path: str) -> HttpResponse:
    answer = steps.buy(user_id=user_id, sale_id=sale_id, path=path)
    response = refusal_mark(page_answer(answer), answer.code)
    if answer.code is Code.SUCCESS:
        ticket_set(response, request=request, user_id=user_id, sale_id=sale_id)
    return response


@allow("GET")
@_for_shopper_and_sale()
def seckill_result(request: HttpRequest, user_id: int, sale_id: int) -> HttpResponse:
    return ok(selectors.seckill_result(user_id=user_id, sale_id=sale_id))
