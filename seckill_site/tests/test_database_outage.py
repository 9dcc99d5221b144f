"""The shop with PostgreSQL out of reach, as while a failover has no leader yet.

A web server (gunicorn) and a Celery worker of their own reach the test database through
lab.faultproxy; the test itself reaches it directly. "cut" refuses every connection (a server
stopped or restarting), "blackhole" accepts one and never answers (a partition, a leader gone
without a word), which only libpq's connect timeout (DATABASE_CONNECT_TIMEOUT) ends. Either way:

- every page and endpoint that needs PostgreSQL answers 503 "busy, retry" with Retry-After, in
  the JSON envelope or as the HTML error page, within ANSWER_BOUND_S: never a 500, never a hang;
- the gate, which reads and writes Redis alone, still queues a buy;
- the order writer keeps the reservation in its outbox and retries, and once PostgreSQL answers
  again it writes the order and the shopper's poll gives its id.
"""

import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest
import requests
from django.conf import settings

from lab.faultproxy import FaultProxy, database_proxy, database_url
from lab.shopper import Shopper, session_create
from orders.models import Order
from sales import sale_state
from seckill_site.codes import Code
from testutils.factories.orders import buy
from testutils.factories.sales import make_sale
from testutils.factories.users import PASSWORD, make_merchant, make_user
from testutils.processes import ROOT, celery_worker_running, gunicorn_running
from testutils.shoppers import path_for

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.slow]

# A refused connection fails at once, a black-holed one after the connect timeout (3 s by
# default); two seconds on top for a loaded machine. A request that tried to connect twice, or
# waited for an answer with no timeout at all, overruns it.
ANSWER_BOUND_S = 5.0
# No answer by then is a hang: the balancer gives up on the shop then (deploy/haproxy.cfg).
CLIENT_TIMEOUT_S = 30
# From PostgreSQL's return to the order's id in the poll: the writer's next retry, whose backoff
# doubles from 1 s up to 30 s (seckill.tasks.order_flush), then its batch.
RESUME_BOUND_S = 60.0
# The web server's and the worker's own queue: the session's worker must not write these orders.
WORKER_NAME = "dboutage"


@dataclass
class Shop:
    url: str
    proxy: FaultProxy
    worker_log: Path


@pytest.fixture(scope="module")
def shop_on_proxied_postgres(django_db_setup):
    """A web server and a Celery worker whose every database connection goes through the proxy."""
    proxy = database_proxy(settings.DATABASES["default"]).start()
    env = {
        "DATABASE_URL": database_url(settings.DATABASES["default"], proxy),
        "CELERY_TASK_DEFAULT_QUEUE": f"{settings.CELERY_TASK_DEFAULT_QUEUE}-{WORKER_NAME}",
    }
    try:
        with gunicorn_running(**env) as url, celery_worker_running(WORKER_NAME, **env):
            yield Shop(url, proxy, ROOT / ".run" / f"{WORKER_NAME}-worker.log")
    finally:
        proxy.stop()


@pytest.fixture
def shop(shop_on_proxied_postgres):
    """The shop with PostgreSQL in reach when the test starts, and again after it."""
    shop_on_proxied_postgres.proxy.set_mode("pass")
    yield shop_on_proxied_postgres
    shop_on_proxied_postgres.proxy.set_mode("pass")


def timed(call: Callable[[], requests.Response]) -> tuple[requests.Response, float]:
    started = time.monotonic()
    response = call()
    return response, time.monotonic() - started


def assert_busy(response: requests.Response, *, json: bool) -> None:
    """503 "busy, retry" with Retry-After: the envelope for JSON callers, the error page for people."""
    assert response.status_code == 503, (response.status_code, response.text[:500])
    assert response.headers["Retry-After"] == "5"
    if json:
        assert response.json()["code"] == Code.SERVER_BUSY.code
    else:
        assert "<html" in response.text and "busy" in response.text


def _get(url: str, who: Shopper, *, json: bool) -> requests.Response:
    accept = "application/json" if json else "text/html"
    return requests.get(url, headers={**who.headers(), "Accept": accept}, timeout=CLIENT_TIMEOUT_S)


def _post(url: str, who: Shopper, data: dict, *, json: bool) -> requests.Response:
    accept = "application/json" if json else "text/html"
    return requests.post(url, data, headers={**who.headers(), "Accept": accept}, timeout=CLIENT_TIMEOUT_S)


Request = tuple[bool, Callable[[], requests.Response]]  # (answered in JSON?, the request)


def _requests_needing_postgres(url: str) -> dict[str, Request]:
    """Requests each of which must read PostgreSQL, by name: a shopper's, a merchant's and
    logging in, on the pages and the API."""
    shopper, merchant = make_user(), make_merchant()
    order = buy(sale=make_sale(stock=3), user=shopper)
    as_shopper = Shopper(shopper.pk, session_create(shopper))
    as_merchant = Shopper(merchant.pk, session_create(merchant))
    login = {"mobile": shopper.mobile, "password": PASSWORD}
    return {
        "order page": (False, lambda: _get(f"{url}/orders/{order.order_no}", as_shopper, json=False)),
        "order list": (False, lambda: _get(f"{url}/orders/", as_shopper, json=False)),
        "order JSON": (True, lambda: _get(f"{url}/orders/{order.order_no}", as_shopper, json=True)),
        "API order list": (True, lambda: _get(f"{url}/api/v1/orders", as_shopper, json=True)),
        "API me": (True, lambda: _get(f"{url}/api/v1/users/me", as_shopper, json=True)),
        "admin": (False, lambda: _get(f"{url}/admin/", as_merchant, json=False)),
        "admin orders": (False, lambda: _get(f"{url}/admin/orders/order/", as_merchant, json=False)),
        "login": (False, lambda: _post(f"{url}/user/login", Shopper(0), login, json=False)),
        "API login": (True, lambda: requests.post(f"{url}/api/v1/users/login", json=login, timeout=CLIENT_TIMEOUT_S)),
    }


@pytest.mark.parametrize("mode", ["cut", "blackhole"])
def test_what_needs_postgres_answers_503_within_the_bound_while_it_is_out_of_reach(shop, mode):
    calls = _requests_needing_postgres(shop.url)
    shop.proxy.set_mode(mode)
    # One after the other: each is timed alone, not behind the others in the server's threads.
    for name, (json, call) in calls.items():
        response, seconds = timed(call)
        assert_busy(response, json=json)
        assert seconds < ANSWER_BOUND_S, (name, seconds)
    response, seconds = timed(lambda: requests.get(f"{shop.url}/readyz", timeout=CLIENT_TIMEOUT_S))
    # Reported, but the node stays in the balancer: the gate needs only Redis.
    assert response.status_code == 200 and response.json()["degraded"] == ["postgres"], response.text
    assert seconds < ANSWER_BOUND_S, seconds

    shop.proxy.set_mode("pass")
    for name, (_json, call) in calls.items():
        response = call()
        assert response.status_code < 500, (name, response.status_code, response.text[:300])


def _log_since(log: Path, offset: int) -> str:
    return log.read_bytes()[offset:].decode(errors="replace")


@pytest.mark.parametrize("mode", ["cut", "blackhole"])
def test_a_buy_is_queued_while_postgres_is_out_of_reach_and_written_once_it_is_back(shop, mode):
    sale, user = make_sale(stock=3), make_user()
    shopper = Shopper(user.pk, session_create(user))
    path = path_for(user.pk, sale.pk)
    poll = lambda: shopper.get(f"{shop.url}/seckill/result", goodsId=sale.pk).json()["data"]  # noqa: E731
    log_start = shop.worker_log.stat().st_size
    shop.proxy.set_mode(mode)

    response, seconds = timed(lambda: shopper.post(f"{shop.url}/seckill/{path}/doSeckill", {"goodsId": sale.pk}))
    assert response.status_code == 200 and response.json()["data"]["status"] == "queued", response.text
    assert seconds < ANSWER_BOUND_S, seconds

    # The writer took the flush, met the outage and will retry; the reservation waits in the outbox.
    deadline = time.monotonic() + RESUME_BOUND_S
    while "order_flush" not in (log := _log_since(shop.worker_log, log_start)) or "retry:" not in log:
        assert time.monotonic() < deadline, f"no retry of the flush in the worker's log:\n{log}"
        time.sleep(0.2)
    assert "OperationalError" in log, log
    assert sale_state.reservations_count([sale.pk])[sale.pk] == 1
    assert not Order.objects.filter(sale=sale).exists()
    assert poll() == 0  # queued

    shop.proxy.set_mode("pass")
    deadline = time.monotonic() + RESUME_BOUND_S
    while (result := poll()) == 0:
        assert time.monotonic() < deadline, f"no order {RESUME_BOUND_S:g} s after PostgreSQL came back"
        time.sleep(0.2)
    order = Order.objects.get(sale=sale)
    assert result == order.pk and order.user_id == user.pk
    assert sale_state.reservations_count([sale.pk])[sale.pk] == 0
