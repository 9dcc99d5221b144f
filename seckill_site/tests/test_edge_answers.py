"""deploy/edge-answers.vcl in a real varnishd (tools/edge.py, answers on) in front of the real
shop under gunicorn, on the tests' Redis: a ticketed result poll the edge answers is Django's
answer to it (status, body, the headers that matter) in both languages, and every poll the shop
no longer vouches for passes to Django, which refuses it its way."""

import re
import time

import pytest
import requests
from django.conf import settings as django_settings
from django.http import HttpRequest, HttpResponse

from lab.shopper import Shopper, session_create
from sales import sale_state
from sales.codes import SaleCode
from sales.sale_state import keys
from sales.selectors import sale_writes_in_flight
from seckill import tickets
from seckill.fastpath.refusal import refusal_response
from seckill_site.redis import client as redis
from testutils.factories.sales import make_sale
from testutils.factories.users import make_user
from testutils.processes import gunicorn_running
from testutils.shoppers import path_for
from tools.edge import ROOT, edge_down, edge_up, varnish_available
from tools.edge_answers import answers_files
from tools.missing import missing
from users.revocation import user_auth_revoke
from users.sessions import SessionStore, session_stored_key
from users.tokens import api_token_issue

pytestmark = [
    pytest.mark.processes,
    pytest.mark.django_db(transaction=True),
    pytest.mark.skipif(
        not varnish_available(),
        reason=missing("varnishd is not installed: the edge tests did not run", "varnish", "varnish-redis"),
    ),
]

POLL = "/seckill/result"
LANGUAGES = {
    "en": {},
    "zh-hans by Accept-Language": {"Accept-Language": "zh-CN,zh;q=0.9,en;q=0.5"},
    "zh-hans by cookie": {"Cookie": "django_language=zh-hans"},
}
# What each server adds of its own; every other header must be the same.
OWN = {"date", "server", "via", "x-varnish", "age", "accept-ranges", "connection", "x-cache", "keep-alive"}
FRAMING = {"content-length", "transfer-encoding"}


@pytest.fixture(scope="module")
def shop(django_db_setup, django_db_blocker, tmp_path_factory):
    with gunicorn_running() as url:
        directory = tmp_path_factory.mktemp("edge")
        edge = edge_up(directory, url.removeprefix("http://"), answers=True)
        try:
            yield url, edge, directory
        finally:
            edge_down(directory)


@pytest.fixture(autouse=True)
def writes_settled():
    """A real buy (ticketed) leaves a reservation that a Celery worker another test of the run
    left going may be writing as an order while this test's database is emptied after it: the
    two deadlock. Wait for those writes, then forget what no worker took."""
    bought.clear()
    yield
    deadline = time.monotonic() + 15
    while any(sale_writes_in_flight(sale_id=sale_id) for sale_id in bought) and time.monotonic() < deadline:
        time.sleep(0.05)
    for sale_id in bought:
        sale_state.sale_forget(sale_id=sale_id)


bought: set[int] = set()


def ticketed(edge: str, sale) -> tuple[int, str, str]:
    """(user id, session key, ticket) of a shopper whose buy of `sale` was queued."""
    bought.add(sale.pk)
    user = make_user()
    shopper = Shopper(user.pk, session_create(user))
    response = shopper.post(f"{edge}/seckill/{path_for(user.pk, sale.pk)}/doSeckill", {"goodsId": sale.pk})
    assert response.json()["code"] == 0, response.text
    return user.pk, shopper.session, response.cookies["seckill_result"]


def queued(sale) -> tuple[int, str, str]:
    """(user id, session key, ticket) of a shopper as a queued buy of `sale` leaves them: a
    session, the ticket the buy's answer sets and the result 0 in Redis. No reservation stands
    behind it, so no order writer (a Celery worker another test of the run left going) writes
    an order's id over the result a test sets."""
    user = make_user()
    request = HttpRequest()
    request.session = SessionStore(session_create(user))
    response = HttpResponse()
    tickets.ticket_set(response, request=request, user_id=user.pk, sale_id=sale.pk)
    redis().set(keys.result(sale.pk, user.pk), 0)
    return user.pk, request.session.session_key, response.cookies[django_settings.SECKILL_RESULT_TICKET_COOKIE].value


def get(base: str, sale_id: int, session: str, ticket: str, language: str = "en", query: str = ""):
    headers = dict(LANGUAGES[language])
    cookies = [f"sessionid={session}", f"seckill_result={ticket}", *filter(None, [headers.pop("Cookie", "")])]
    headers.update({"Cookie": "; ".join(cookies), "X-Request-ID": "edge-test-1"})
    response = requests.get(f"{base}{POLL}?{query or f'goodsId={sale_id}'}", headers=headers, timeout=10)
    kept = {name.lower(): value for name, value in response.headers.items() if name.lower() not in OWN}
    # Only the edge's own answer comes without a Server header (gunicorn names itself).
    kept["answered by"] = "edge" if "server" not in response.headers else "shop"
    return response.status_code, kept, response.content


def answered(_directory, ask):
    """`ask()`'s answer (its "answered by" left out) and whether the edge gave it itself."""
    status, headers, body = ask()
    by = headers.pop("answered by")
    return (status, headers, body), by == "edge"


def djangos(*args, **kwargs):
    status, headers, body = get(*args, **kwargs)
    assert headers.pop("answered by") == "shop"
    return status, headers, body


@pytest.mark.parametrize("language", LANGUAGES)
def test_the_edge_answers_a_ticketed_poll_with_djangos_answer_queued_ordered_failed(shop, language):
    url, edge, directory = shop
    sale = make_sale(stock=5)
    user_id, session, ticket = queued(sale)
    for value in (None, 4321, -1):
        if value is not None:
            redis().set(keys.result(sale.pk, user_id), value)
        expected = djangos(url, sale.pk, session, ticket, language)
        got, at_edge = answered(directory, lambda: get(edge, sale.pk, session, ticket, language))
        assert at_edge and got == expected
        assert expected[0] == 200 and expected[2] == b'{"code": 0, "msg": "success", "data": %d}' % (value or 0)
        assert expected[1]["content-language"] == ("en" if language == "en" else "zh-hans")


def test_a_poll_the_shop_no_longer_vouches_for_passes_to_django(shop, settings):
    url, edge, directory = shop
    sale, other_sale = make_sale(stock=5), make_sale(stock=5)
    user_id, session, ticket = queued(sale)
    _other_id, other_session, other_ticket = queued(other_sale)
    signed, _sep, signature = ticket.rpartition(":")
    lifetime = tickets.ticket_seconds()
    refused = {
        "a bad signature": (sale.pk, session, f"{signed}:{signature[:-1]}{'0' if signature[-1] != '0' else '1'}"),
        "expired": (sale.pk, session, tickets.ticket_signed(ticket.split(":")[0], int(time.time()) - lifetime - 1)),
        "for another sale": (other_sale.pk, session, ticket),
        "another session's cookie": (sale.pk, other_session, ticket),
        "another user's ticket": (sale.pk, session, other_ticket),
    }
    for name, (sale_id, session_key, value) in refused.items():
        got, at_edge = answered(directory, lambda: get(edge, sale_id, session_key, value))  # noqa: B023
        assert not at_edge and got == djangos(url, sale_id, session_key, value), name
    got, at_edge = answered(directory, lambda: get(edge, sale.pk, session, ticket, query=f"goodsId=0{sale.pk}"))
    assert not at_edge
    # Still good: signed within its life.
    recent = tickets.ticket_signed(ticket.split(":")[0], int(time.time()) - lifetime + 5)
    assert answered(directory, lambda: get(edge, sale.pk, session, recent))[1]

    redis().delete(keys.result(sale.pk, user_id))  # only the database knows
    got, at_edge = answered(directory, lambda: get(edge, sale.pk, session, ticket))
    assert not at_edge and got == djangos(url, sale.pk, session, ticket)


@pytest.mark.parametrize("ended", ["logged out", "revoked"])
def test_a_poll_after_the_session_ended_passes_to_django_at_once(shop, ended):
    _url, edge, directory = shop
    sale = make_sale(stock=5)
    user_id, session, ticket = queued(sale)
    assert answered(directory, lambda: get(edge, sale.pk, session, ticket))[1]
    if ended == "logged out":
        redis().delete(session_stored_key(session))  # as a logout, a flush or an expiry does
    else:
        user_auth_revoke(user_id=user_id)
    (status, _headers, _body), at_edge = answered(directory, lambda: get(edge, sale.pk, session, ticket))
    assert not at_edge and status == 401


def test_a_language_the_edge_cannot_decide_simply_passes(shop):
    url, edge, directory = shop
    sale = make_sale(stock=5)
    _user_id, session, ticket = queued(sale)
    for accept in ("fr-FR,zh;q=0.9", "en;q=0.8,zh;q=0.9", "en,,zh", "*", "x" * 600):
        LANGUAGES["odd"] = {"Accept-Language": accept}
        try:
            got, at_edge = answered(directory, lambda: get(edge, sale.pk, session, ticket, "odd"))  # noqa: B023
            assert not at_edge and got == djangos(url, sale.pk, session, ticket, "odd"), accept
        finally:
            del LANGUAGES["odd"]
    for accept, language in (("en-US,en;q=0.9", "en"), ("zh-TW", "zh-hans")):
        LANGUAGES["plain"] = {"Accept-Language": accept}
        try:
            got, at_edge = answered(directory, lambda: get(edge, sale.pk, session, ticket, "plain"))  # noqa: B023
            assert at_edge and got == djangos(url, sale.pk, session, ticket, "plain"), accept
            assert got[1]["content-language"] == language
        finally:
            del LANGUAGES["plain"]


def press(base: str, sale_id: int, language: str = "en", **headers):
    """An API buy press of `sale_id` (no token: the refusal comes before anyone is asked)."""
    headers = {**LANGUAGES[language], **headers, "X-Request-ID": "edge-test-2"}
    response = requests.post(f"{base}/api/v1/sales/{sale_id}/buy/not-a-path", headers=headers, timeout=10)
    kept = {name.lower(): value for name, value in response.headers.items() if name.lower() not in OWN | FRAMING}
    return (response.status_code, kept, response.content), "server" not in response.headers


def framed(answer) -> dict[str, str]:
    """`answer`'s headers but its framing, which each server writes its own way."""
    return {name.lower(): value for name, value in answer.items() if name.lower() not in FRAMING}


@pytest.mark.parametrize("language", LANGUAGES)
def test_an_api_buy_of_a_sale_published_sold_out_is_refused_at_the_edge_as_by_the_shop(shop, language):
    _url, edge, _directory = shop
    sale = make_sale(stock=1)
    ticketed(edge, sale)  # the last unit: the gate marks the sale sold out and publishes it
    assert 0 < redis().pttl(keys.closed(sale.pk)) <= 1000
    got, at_edge = press(edge, sale.pk, language)
    # What a process that knows answers (the fast path and SoldOutMiddleware alike; a process
    # that has not heard yet asks the gate, which says the same).
    answer = refusal_response(SaleCode.SOLD_OUT, "en" if language == "en" else "zh-hans")
    headers = framed(answer) | {"x-request-id": "edge-test-2"}
    assert at_edge and got == (answer.status_code, headers, answer.content)


def test_the_edges_refusal_of_an_api_buy_is_the_shops_view_answering_from_redis(shop):
    """The same press, by a shopper with a token, answered by the edge and then by the shop's
    buy view when no process knows the sale is sold out any more (the marks, and the `closed`
    key the edge reads, live a second) and the gate's script says so from Redis."""
    url, edge, _directory = shop
    sale = make_sale(stock=1)
    ticketed(edge, sale)  # the last unit: the gate marks the sale sold out and publishes it
    token = {"Authorization": f"Token {api_token_issue(user_id=make_user().pk)}"}
    for language in LANGUAGES:
        at_the_edge, at_edge = press(edge, sale.pk, language, **token)
        time.sleep(1.05)  # every process's mark is gone: SoldOutMiddleware and the fast path pass
        by_the_view, at_edge_too = press(url, sale.pk, language, **token)  # the view marks and publishes again
        assert at_edge and not at_edge_too
        assert at_the_edge == by_the_view, language
        assert by_the_view[2] == refusal_response(SaleCode.SOLD_OUT, "en" if language == "en" else "zh-hans").content


def test_a_unit_coming_back_reaches_the_edge_at_once_and_an_open_sale_passes(shop):
    _url, edge, _directory = shop
    sale = make_sale(stock=1)
    ticketed(edge, sale)
    assert press(edge, sale.pk)[1]
    sale_state.sold_out_clear(sale.pk)  # as a unit's return does (stock.unit_return)
    assert not press(edge, sale.pk)[1]
    open_sale = make_sale(stock=5)
    assert not press(edge, open_sale.pk)[1]
    # A process's mark outlives no second: nor does what the edge is told.
    sale_state.sold_out_mark(sale.pk)
    assert press(edge, sale.pk)[1]
    time.sleep(1.05)
    assert not press(edge, sale.pk)[1]
    assert redis().get(keys.closed(sale.pk)) is None


def test_an_edge_that_cannot_reach_redis_passes_everything(shop, tmp_path):
    url, edge, _directory = shop
    sale = make_sale(stock=1)
    _user_id, session, ticket = ticketed(edge, sale)  # the last unit: sold out, published
    answers_files(tmp_path)
    config = tmp_path / "edge-answers-config.vcl"
    config.write_text(re.sub(r'location="[^"]+"', 'location="127.0.0.1:1"', config.read_text()))
    blind = edge_up(tmp_path, url.removeprefix("http://"), answers=None)
    try:
        got, at_edge = answered(tmp_path, lambda: get(blind, sale.pk, session, ticket))
        assert not at_edge and got == djangos(url, sale.pk, session, ticket)
        assert not press(blind, sale.pk)[1]
    finally:
        edge_down(tmp_path)


@pytest.mark.parametrize("when", ["not started", "ended"])
def test_an_api_buy_outside_the_sales_window_is_refused_at_the_edge_as_by_the_shop(shop, when):
    _url, edge, _directory = shop
    sale = make_sale(stock=5, starts_in=600) if when == "not started" else make_sale(stock=5, starts_in=-7200, lasts=60)
    code = SaleCode.NOT_STARTED if when == "not started" else SaleCode.ENDED
    for language in LANGUAGES:
        got, at_edge = press(edge, sale.pk, language)
        answer = refusal_response(code, "en" if language == "en" else "zh-hans")
        headers = framed(answer) | {"x-request-id": "edge-test-2"}
        assert at_edge and got == (answer.status_code, headers, answer.content), language


def test_deploys_own_answers_files_answer_nothing_even_with_redis_at_hand(shop, tmp_path):
    url, edge, directory = shop
    sale = make_sale(stock=1)
    _user_id, session, ticket = ticketed(edge, sale)  # sold out, published
    deploys = (ROOT / "deploy" / "edge-answers-config.vcl").read_text()
    location = re.search(r'location="[^"]+"', (directory / "edge-answers-config.vcl").read_text())
    assert location is not None
    (tmp_path / "edge-answers-config.vcl").write_text(re.sub(r'location="[^"]+"', location.group(0), deploys))
    (tmp_path / "edge-secrets.vcl").write_text((ROOT / "deploy" / "edge-secrets.vcl").read_text())
    # Deploy's names carry no test prefix: the published refusal, as production's key would read.
    redis().set(f"sk:{{{sale.pk}}}:closed", "SOLD_OUT", px=5000)
    plain = edge_up(tmp_path, url.removeprefix("http://"), answers=None)
    try:
        assert not answered(tmp_path, lambda: get(plain, sale.pk, session, ticket))[1]
        answer = requests.post(f"{plain}/api/v1/sales/{sale.pk}/buy/not-a-path", timeout=10)
        assert answer.headers.get("Server") == "gunicorn", answer.text  # the shop's, not Varnish's
    finally:
        redis().delete(f"sk:{{{sale.pk}}}:closed")
        edge_down(tmp_path)
