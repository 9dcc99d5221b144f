"""A buy's public refusal (sold out, entries closed, not started, ended) is the same answer
whichever layer gives it: the fast path below Django, SoldOutMiddleware from this process's
copies, or the view and the gate's script from Redis when those copies know nothing or are old.
Page and API, English and Chinese: status, body and header list (in order) are compared at the
WSGI level, with a shopper's credentials on every request so that each layer could answer it.
The edge repeats `refusal_response` (tools/edge_answers.py; seckill_site/tests/test_edge_answers.py
compares varnishd's answers with it). Real PostgreSQL and Redis."""

import time
from collections.abc import Callable

import pytest
from prometheus_client import REGISTRY

from sales import sale_state
from sales.sale_state import Refusal, keys
from seckill.fastpath.refusal import REFUSAL_VIEWS, refusal_response
from seckill.services import draw as draw_service
from seckill_site.redis import client as redis
from testutils.draws import enter_all, window_over
from testutils.factories.sales import make_draw_sale, make_sale
from testutils.factories.users import make_user, make_users
from testutils.wsgi import answered_below_django, call, environ
from users.tokens import api_token_issue

pytestmark = pytest.mark.django_db

CSRF = "a" * 32
LANGUAGES = {
    "en": ({}, ""),
    "zh-hans by Accept-Language": ({"HTTP_ACCEPT_LANGUAGE": "zh-CN,zh;q=0.9,en;q=0.5"}, ""),
    "zh-hans by cookie": ({}, "; django_language=zh-hans"),
}


@pytest.fixture(autouse=True)
def long_marks(monkeypatch):
    # A loaded machine may take over a second between two requests of a test.
    monkeypatch.setattr(sale_state.marks, "SOLD_OUT_MARK_SECONDS", 600.0)
    monkeypatch.setattr(sale_state.marks, "WINDOW_CACHE_SECONDS", 600.0)


def _sale(refusal: Refusal) -> tuple[int, Callable[[], None]]:
    """A sale every buy of which `refusal` refuses, and how to leave this process's copies
    knowing nothing that would let SoldOutMiddleware (or the gate's own first look) answer."""
    if refusal is Refusal.SOLD_OUT:
        sale = make_sale(stock=5)
        redis().set(keys.stock(sale.pk), 0)  # the last unit went in another process
        return sale.pk, sale_state.process_marks_clear
    if refusal is Refusal.ENTRIES_CLOSED:
        sale = make_draw_sale(stock=1)
        enter_all(make_users(2), sale)
        window_over(sale)
        assert draw_service.sale_draw(sale_id=sale.pk).state == "drawn"  # one winner: no unit left

        def forget() -> None:
            sale_state.process_marks_clear()
            sale_state.window_refusal(sale.pk)  # the gate says "entries closed" by the window's draw

        return sale.pk, forget
    # The window moved in Redis; this process's copy still says the sale is on.
    sale = make_sale(stock=5)
    now = time.time()
    start, end = (now + 3600, now + 7200) if refusal is Refusal.NOT_STARTED else (now - 7200, now - 3600)

    def stale() -> None:
        sale_state.process_marks_clear()
        sale_state.window_set(sale_id=sale.pk, start=now - 60, end=now + 3600)
        assert sale_state.window_refusal(sale.pk) is None  # the copy: on
        redis().hset(keys.window(sale.pk), mapping={"start": start, "end": end})  # by another process

    return sale.pk, stale


def _known(refusal: Refusal, sale_id: int) -> None:
    """This process's copies know the refusal (the fast path's and the middleware's case)."""
    sale_state.process_marks_clear()
    if refusal in (Refusal.SOLD_OUT, Refusal.ENTRIES_CLOSED):
        sale_state.window_refusal(sale_id)
        sale_state.sold_out_mark(sale_id)
    assert sale_state.refusal_known(sale_id, ask=True) is refusal


def _count(view: str) -> float:
    labels = {"view": view, "method": "POST", "status": "200"}
    return REGISTRY.get_sample_value("seckill_http_requests_total", labels) or 0.0


def _without_cookies(answer: tuple[str, list[tuple[str, str]], bytes]) -> tuple[str, list[tuple[str, str]], bytes]:
    # Set-Cookie is the shopper's own: the session Django read slides (none is set below it).
    status, headers, body = answer
    return status, [(name, value) for name, value in headers if name != "Set-Cookie"], body


@pytest.mark.parametrize("refusal", [Refusal.SOLD_OUT, Refusal.ENTRIES_CLOSED, Refusal.NOT_STARTED, Refusal.ENDED],
                         ids=lambda refusal: refusal.name.lower())  # fmt: skip
@pytest.mark.parametrize("route", ["page", "api"])
@pytest.mark.parametrize("language", LANGUAGES)
def test_every_layer_gives_a_refusal_the_same_bytes(apps, client, flushes, refusal, route, language):
    django, fast = apps
    sale_id, forget = _sale(refusal)
    user = make_user()
    client.force_login(user)
    extra, cookie = LANGUAGES[language]
    if route == "page":
        cookies = f"sessionid={client.cookies['sessionid'].value}; csrftoken={CSRF}{cookie}"
        env = environ("POST", "/seckill/a1b2c3/doSeckill", body=f"goodsId={sale_id}".encode(),
                      HTTP_COOKIE=cookies, HTTP_X_CSRFTOKEN=CSRF, **extra)  # fmt: skip
    else:
        env = environ("POST", f"/api/v1/sales/{sale_id}/buy/a1b2c3",
                      HTTP_AUTHORIZATION=f"Token {api_token_issue(user_id=user.pk)}", **extra)  # fmt: skip
        if cookie:
            env["HTTP_COOKIE"] = cookie.removeprefix("; ")
    chinese = language != "en"
    expected = refusal_response(refusal.code, "zh-hans" if chinese else "en")
    answers = {}

    forget()  # the view and the gate's script answer, from Redis
    before = _count(REFUSAL_VIEWS[refusal])
    with answered_below_django(fast, expected=False):
        by_the_view = call(fast, env)
    answers["view"] = _without_cookies(by_the_view)
    # A new session slides on its first request: the refusal given again keeps the cookie.
    assert any(n == "Set-Cookie" and "sessionid=" in v for n, v in by_the_view[1]) is (route == "page")
    assert _count(REFUSAL_VIEWS[refusal]) == before, "SoldOutMiddleware answered, not the view"

    _known(refusal, sale_id)  # SoldOutMiddleware answers, from this process's copies
    answers["middleware"] = call(django, env)
    assert _count(REFUSAL_VIEWS[refusal]) == before + 1, "the view answered, not SoldOutMiddleware"

    _known(refusal, sale_id)
    with answered_below_django(fast, expected=True):
        answers["fast path"] = call(fast, env)

    status, headers, body = answers["fast path"]
    assert body == expected.content and status == "200 OK"
    assert [name for name, _value in headers] == [*expected.headers, "X-Request-ID"]
    assert dict(headers)["Content-Language"] == ("zh-hans" if chinese else "en")
    assert answers["middleware"] == answers["fast path"]
    assert answers["view"] == answers["fast path"], f"{answers['view']} != {answers['fast path']}"
