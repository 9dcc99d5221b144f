"""The result ticket (seckill.tickets) and the result polls seckill.fastpath answers with it.

A poll the fast path answers is compared, at the WSGI level (status line, header list in order,
body), with Django's own answer to the same request; a poll the ticket cannot vouch for must
reach Django. Real PostgreSQL and Redis; the buys go through the gate as a shopper's do."""

import json
import time

import pytest
from django.core import signals
from django.db import close_old_connections
from django.test import Client
from prometheus_client import REGISTRY

from lab.shopper import session_create
from sales import sale_state
from sales.sale_state import keys
from seckill import tickets
from seckill.services.writer import sale_flush
from seckill_site.http import Answer, page_answer
from seckill_site.redis import client as redis
from testutils.factories.sales import make_sale
from testutils.factories.users import make_user
from testutils.shoppers import path_for
from testutils.wsgi import LANGUAGES, answered_below_django, call, environ
from users.revocation import user_auth_revoke
from users.sessions import SessionStore, session_stored_key

pytestmark = pytest.mark.django_db

TICKET = "seckill_result"
POLL = "/seckill/result"


@pytest.fixture(autouse=True)
def connections_closed_again():
    """`bought` leaves Django's connection closers disconnected for `apps`; later tests get them back."""
    yield
    signals.request_started.connect(close_old_connections)
    signals.request_finished.connect(close_old_connections)


def logged_in(user) -> Client:
    """A browser of `user`'s: Django's test client holding a session as the login leaves it."""
    browser = Client()
    browser.cookies["sessionid"] = session_create(user)
    return browser


def bought(browser: Client, user, sale, *, api: bool = False):
    """The answer to one buy through the gate (page or API), the browser keeping its cookies."""
    path = path_for(user.pk, sale.pk)
    if api:
        response = browser.post(f"/api/v1/sales/{sale.pk}/buy/{path}")
    else:
        response = browser.post(f"/seckill/{path}/doSeckill", {"goodsId": sale.pk})
    # The test client connects these again after its request; `apps` keeps the connection.
    signals.request_started.disconnect(close_old_connections)
    signals.request_finished.disconnect(close_old_connections)
    return response


def shopper_with_ticket(sale, flushes):
    """(user, session key, ticket) of a shopper whose buy of `sale` was queued."""
    user = make_user()
    browser = logged_in(user)
    response = bought(browser, user, sale)
    assert response.json()["code"] == 0 and response.cookies[TICKET].value
    return user, browser.cookies["sessionid"].value, response.cookies[TICKET].value


def poll(sale_id: int, session: str, ticket: str | None, language: str = "en", **extra) -> dict:
    cookies = [f"sessionid={session}"] + ([f"{TICKET}={ticket}"] if ticket else [])
    headers = dict(LANGUAGES[language])
    if "HTTP_COOKIE" in headers:
        cookies.append(headers.pop("HTTP_COOKIE"))
    return environ("GET", POLL, query=f"goodsId={sale_id}", HTTP_COOKIE="; ".join(cookies), **headers, **extra)


def learnt(fast, env: dict) -> None:
    """Let the first poll of its kind through, so the fast path knows Django's headers."""
    with answered_below_django(fast, expected=False):
        call(fast, env)


def assert_djangos_bytes(django, fast, env: dict) -> tuple[str, list[tuple[str, str]], bytes]:
    again = dict(env, HTTP_X_REQUEST_ID="test-request-2")
    with answered_below_django(fast, expected=True):
        got = call(fast, again)
    expected = call(django, again)
    assert got == expected
    return got


@pytest.mark.parametrize("language", LANGUAGES)
def test_polls_with_the_ticket_are_djangos_bytes_queued_ordered_and_failed(apps, flushes, language):
    django, fast = apps
    sale = make_sale(stock=5)
    user, session, ticket = shopper_with_ticket(sale, flushes)
    env = poll(sale.pk, session, ticket, language)
    learnt(fast, env)

    status, headers, body = assert_djangos_bytes(django, fast, env)
    assert status == "200 OK" and json.loads(body)["data"] == 0
    assert ("Content-Language", "en" if language == "en" else "zh-hans") in headers

    sale_flush(sale_id=flushes[0])
    _status, _headers, body = assert_djangos_bytes(django, fast, env)
    assert json.loads(body)["data"] > 0  # the order id: a longer body, its own Content-Length

    redis().set(keys.result(sale.pk, user.pk), sale_state.RESULT_FAILED)  # as the writer marks a unit it lacked
    _status, _headers, body = assert_djangos_bytes(django, fast, env)
    assert json.loads(body)["data"] == -1


def test_a_fast_poll_is_counted_under_djangos_view_label(apps, flushes):
    _django, fast = apps
    sale = make_sale(stock=5)
    _user, session, ticket = shopper_with_ticket(sale, flushes)
    env = poll(sale.pk, session, ticket)
    learnt(fast, env)
    labels = {"view": "seckill/result", "method": "GET", "status": "200"}
    fast.counts.fold()
    before = REGISTRY.get_sample_value("seckill_http_requests_total", labels) or 0.0
    for _ in range(3):
        call(fast, env)
    fast.counts.fold()
    assert REGISTRY.get_sample_value("seckill_http_requests_total", labels) == before + 3


def _signed_at(ticket: str, seconds_ago: int) -> str:
    """The same ticket as if it had been signed `seconds_ago`."""
    return tickets.ticket_signed(ticket.split(":")[0], int(time.time()) - seconds_ago)


def test_a_tampered_expired_other_sale_or_other_users_ticket_goes_to_django(apps, flushes, settings):
    django, fast = apps
    sale, other_sale = make_sale(stock=5), make_sale(stock=5)
    _user, session, ticket = shopper_with_ticket(sale, flushes)
    _other, other_session, other_ticket = shopper_with_ticket(other_sale, flushes)
    learnt(fast, poll(sale.pk, session, ticket))
    assert_djangos_bytes(django, fast, poll(sale.pk, session, ticket))  # the ticket itself is good

    signed, _sep, signature = ticket.rpartition(":")
    flipped = signature[:-1] + ("0" if signature[-1] != "0" else "1")
    user_id, sale_id = ticket.split(".")[:2]
    tampered_sale = ticket.replace(f"{user_id}.{sale_id}.", f"{user_id}.{other_sale.pk}.", 1)
    lifetime = settings.SECKILL_RESULT_TICKET_SECONDS
    refused = {
        "a bad signature": poll(sale.pk, session, f"{signed}:{flipped}"),
        "another sale written in": poll(other_sale.pk, session, tampered_sale),
        "expired": poll(sale.pk, session, _signed_at(ticket, lifetime + 1)),
        "for another sale": poll(other_sale.pk, session, ticket),
        "another user's, in my session": poll(sale.pk, session, other_ticket),
        "mine, in another user's session": poll(sale.pk, other_session, ticket),
        "no session": environ("GET", POLL, query=f"goodsId={sale.pk}", HTTP_COOKIE=f"{TICKET}={ticket}"),
        "another spelling of the id": poll(sale.pk, session, ticket) | {"QUERY_STRING": f"goodsId=0{sale.pk}"},
        "more in the query": poll(sale.pk, session, ticket) | {"QUERY_STRING": f"goodsId={sale.pk}&_=1"},
    }
    for name, env in refused.items():
        with answered_below_django(fast, expected=False):
            got = call(fast, env)
        assert got == call(django, env), name
    assert_djangos_bytes(django, fast, poll(sale.pk, session, _signed_at(ticket, lifetime - 5)))


def test_a_ticket_signed_with_a_fallback_key_holds_and_its_key_is_not_djangos(settings):
    payload = f"7.9.{'ab' * 8}.{tickets.session_digest('u7.' + 'k' * 32)}"
    old = tickets.ticket_signed(payload, int(time.time()))
    settings.SECRET_KEY, settings.SECRET_KEY_FALLBACKS = "a-rotated-key-" + "z" * 40, [settings.SECRET_KEY]
    assert tickets.ticket_read(old, session_key="u7." + "k" * 32) == tickets.Ticket(7, 9, "ab" * 8)
    assert tickets.ticket_read(old, session_key="u7." + "j" * 32) is None
    settings.SECRET_KEY_FALLBACKS = []
    assert tickets.ticket_read(old, session_key="u7." + "k" * 32) is None
    assert len(tickets.ticket_key()) == 64 and tickets.ticket_key() != tickets.ticket_key("another-" + "k" * 40)


def test_the_ticket_never_outlives_the_buys_session(settings):
    settings.SECKILL_RESULT_TICKET_SECONDS = 3600
    assert tickets.ticket_seconds() == settings.SESSION_COOKIE_AGE - settings.SESSION_SLIDING_REFRESH_SECONDS


def test_a_revoked_user_is_refused_at_once_with_the_old_ticket(apps, flushes):
    django, fast = apps
    sale = make_sale(stock=5)
    user, session, ticket = shopper_with_ticket(sale, flushes)
    env = poll(sale.pk, session, ticket)
    learnt(fast, env)
    assert_djangos_bytes(django, fast, env)
    user_auth_revoke(user_id=user.pk)
    with answered_below_django(fast, expected=False):
        status, _headers, body = call(fast, env)
    assert status.startswith("401") and json.loads(body)["code"] == 500210  # NOT_LOGGED_IN, no result
    with answered_below_django(fast, expected=False):
        call(fast, env)  # and the session is gone for good


@pytest.mark.parametrize("ended", ["logged out", "flushed", "expired"])
def test_a_poll_after_the_session_ended_is_refused_as_django_refuses_it(apps, flushes, ended):
    """The old cookies sent again after a logout (or the session flushed, or expired in Redis):
    Django says 401, and the fast path must not answer 200 for the ticket's remaining life."""
    django, fast = apps
    sale = make_sale(stock=5)
    user = make_user()
    browser = logged_in(user)
    ticket = bought(browser, user, sale).cookies[TICKET].value
    session = browser.cookies["sessionid"].value
    env = poll(sale.pk, session, ticket)
    learnt(fast, env)
    assert_djangos_bytes(django, fast, env)
    if ended == "logged out":
        assert browser.post("/user/logout").status_code < 400
    elif ended == "flushed":
        SessionStore(session).flush()
    else:
        redis().pexpire(session_stored_key(session), 1)
        time.sleep(0.01)
    with answered_below_django(fast, expected=False):
        status, _headers, body = call(fast, env)
    assert status.startswith("401") and json.loads(body)["code"] == 500210  # NOT_LOGGED_IN, no result


def test_a_result_only_the_database_knows_goes_to_django(apps, flushes):
    django, fast = apps
    sale = make_sale(stock=5)
    user, session, ticket = shopper_with_ticket(sale, flushes)
    sale_flush(sale_id=flushes[0])
    env = poll(sale.pk, session, ticket)
    learnt(fast, env)
    redis().delete(keys.result(sale.pk, user.pk))  # a day on, Redis has let the result go
    with answered_below_django(fast, expected=False):
        got = call(fast, env)
    assert got == call(django, env) and json.loads(got[2])["data"] > 0


def test_a_redis_error_in_the_ticket_path_is_left_to_django(apps, flushes, monkeypatch):
    from redis.exceptions import ConnectionError as RedisConnectionError

    _django, fast = apps
    sale = make_sale(stock=5)
    _user, session, ticket = shopper_with_ticket(sale, flushes)
    env = poll(sale.pk, session, ticket)
    learnt(fast, env)

    def cut(**_kwargs):
        raise RedisConnectionError("cut")

    monkeypatch.setattr(sale_state, "result_beside", cut)  # the fast path's read only: Django's still works
    with answered_below_django(fast, expected=False):
        status, _headers, _body = call(fast, env)
    assert status == "200 OK"


@pytest.mark.parametrize("api", [False, True], ids=["page", "api"])
def test_a_queued_buy_sets_the_ticket_cookie_and_keeps_its_json(flushes, api):
    sale = make_sale(stock=5)
    user = make_user()
    browser = logged_in(user)
    response = bought(browser, user, sale, api=api)
    body = response.json()
    assert body == {"code": 0, "msg": "success", "data": {"status": "queued", "requestId": body["data"]["requestId"]}}
    if not api:
        assert response.content == page_answer(Answer(data=body["data"])).content
    cookie = response.cookies[TICKET]
    assert cookie["path"] == POLL and cookie["httponly"] and cookie["samesite"] == "Lax" and not cookie["secure"]
    assert cookie["max-age"] == tickets.ticket_seconds() == 300
    ticket = tickets.ticket_read(cookie.value, session_key=browser.cookies["sessionid"].value)
    assert ticket is not None and (ticket.user_id, ticket.sale_id) == (user.pk, sale.pk)


def test_the_ticket_cookie_is_secure_where_the_session_cookie_is(flushes, settings):
    settings.SESSION_COOKIE_SECURE = True
    sale = make_sale(stock=5)
    user = make_user()
    assert bought(logged_in(user), user, sale).cookies[TICKET]["secure"]


def test_a_refused_buy_sets_no_ticket(flushes):
    sale = make_sale(stock=1)
    user, other = make_user(), make_user()
    browser = logged_in(user)
    assert bought(browser, user, sale).json()["code"] == 0
    again = bought(browser, user, sale)  # already bought
    assert again.json()["code"] != 0 and TICKET not in again.cookies
    late = bought(logged_in(other), other, sale)  # sold out
    assert late.json()["code"] != 0 and TICKET not in late.cookies


def test_logout_deletes_the_ticket(flushes):
    sale = make_sale(stock=5)
    user = make_user()
    browser = logged_in(user)
    bought(browser, user, sale)
    response = browser.post("/user/logout")
    cookie = response.cookies[TICKET]
    assert cookie.value == "" and cookie["path"] == POLL and cookie["max-age"] == 0
