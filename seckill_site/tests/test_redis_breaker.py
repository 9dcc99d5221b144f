"""The Redis circuit breaker (seckill_site/redis/breaker.py) against a real Redis made unreachable.

A private redis-server behind lab.faultproxy stands in for a web node's link to Redis:
"blackhole" is a cut link (connections stay open, nothing comes back: every command waits out
its socket timeout), "cut" a refused one. Either way a shopper gets 503 "busy, retry" within one
socket timeout plus the probe, then at once without a round trip, never a 500 or "log in";
/readyz answers 503; and the shop answers again once the server does.
"""

import time

import pytest
from django.conf import settings
from django.test import override_settings
from redis.exceptions import RedisClusterException
from redis.exceptions import TimeoutError as RedisTimeoutError

import seckill_site.redis as shop_redis
from lab.faultproxy import FaultProxy
from sales import sale_state
from seckill_site.codes import Code
from seckill_site.redis.breaker import RedisUnavailable, breaker
from testutils.factories.sales import make_sale
from testutils.factories.users import make_user, session_for
from testutils.shoppers import path_for
from tools.services import RedisServer

pytestmark = pytest.mark.django_db

# The first request after the cut waits out one socket timeout (SOCKET_TIMEOUT, 2 s) and the
# probe; a loaded machine gets a second more. Every later one must not touch the network.
FIRST_ANSWER_BOUND_S = 2 + 0.3 + 1.5
OPEN_ANSWER_BOUND_S = 0.5


@pytest.fixture
def proxied_redis(tmp_path, settings):
    """The shop's Redis (cache, sessions, the sale's state) is a private server behind a fault
    proxy; the breaker opens for 1 s and probes within 0.3 s."""
    server = RedisServer("breaker", tmp_path)
    server.start()
    proxy = FaultProxy(server.port).start()
    caches = {"default": {**settings.CACHES["default"], "LOCATION": [f"redis://127.0.0.1:{proxy.port}/0"]}}
    settings.REDIS_BREAKER_SECONDS, settings.REDIS_PROBE_TIMEOUT = 1.0, 0.3

    def fresh_clients() -> None:
        shop_redis.client.cache_clear()
        shop_redis.script.cache_clear()
        breaker.cache_clear()

    with override_settings(CACHES=caches):
        fresh_clients()
        yield proxy
    fresh_clients()
    proxy.stop()
    server.shutdown()


def timed(call):
    started = time.monotonic()
    response = call()
    return response, time.monotonic() - started


def assert_busy(response) -> None:
    assert response.status_code == 503, (response.status_code, response.content[:300])
    assert response["Retry-After"] == "5"
    assert response.json()["code"] == Code.SERVER_BUSY.code


@pytest.mark.parametrize("mode", ["blackhole", "cut"])
def test_a_shop_cut_off_from_redis_answers_503_at_once_and_again_once_it_is_back(
    client, proxied_redis, published, mode
):
    sale, user = make_sale(stock=3), make_user()
    client.cookies["sessionid"] = session_for(user)
    path = path_for(user.pk, sale.pk)
    me = lambda: client.get("/user/me", HTTP_ACCEPT="application/json")  # noqa: E731  # the session, from Redis
    buy = lambda: client.post(f"/seckill/{path}/doSeckill", {"goodsId": sale.pk}, HTTP_ACCEPT="application/json")  # noqa: E731
    assert me().status_code == 200

    proxied_redis.set_mode(mode)
    response, seconds = timed(me)
    assert_busy(response)
    assert seconds < FIRST_ANSWER_BOUND_S, seconds
    assert breaker().is_open()
    for call in (me, buy, me, buy):
        response, seconds = timed(call)
        assert_busy(response)  # never 500, never 401 "log in"
        assert seconds < OPEN_ANSWER_BOUND_S, seconds  # a blackholed round trip would take 2 s
    response, seconds = timed(lambda: client.get("/readyz"))
    assert response.status_code == 503 and "redis" in response.json()["failed"]
    assert seconds < OPEN_ANSWER_BOUND_S, seconds

    proxied_redis.set_mode("pass")
    deadline = time.monotonic() + 10
    while (response := me()).status_code != 200 and time.monotonic() < deadline:
        assert_busy(response)
        time.sleep(0.1)
    assert response.status_code == 200, response.content
    assert not breaker().is_open() and breaker().open_nodes() == []
    assert buy().json()["data"]["status"] == "queued"


def test_an_open_circuit_refuses_without_a_round_trip_until_its_probe_finds_redis(proxied_redis):
    proxied_redis.set_mode("blackhole")
    with pytest.raises((RedisTimeoutError, RedisUnavailable)):
        shop_redis.client().get("breaker-test")
    proxied_redis.set_mode("pass")  # back, but the circuit stays open for its period
    started = time.monotonic()
    with pytest.raises(RedisUnavailable):
        shop_redis.client().get("breaker-test")
    assert time.monotonic() - started < OPEN_ANSWER_BOUND_S
    time.sleep(settings.REDIS_BREAKER_SECONDS)
    assert shop_redis.client().set("breaker-test", "1")  # probed, closed, sent
    assert breaker().open_nodes() == []


def test_a_timeout_on_a_node_that_still_answers_opens_nothing(proxied_redis):
    """A socket timeout on a slow or lossy link is not an outage: the probe finds the node
    answering and nothing is refused (make partition-test, fault 4)."""
    shop_redis.client().ping()
    address = f"127.0.0.1:{proxied_redis.port}"
    breaker().failed(address, RedisTimeoutError("Timeout reading from socket"))
    assert breaker().open_nodes() == [] and not breaker().is_open()
    assert shop_redis.client().ping()


def test_a_buy_whose_sale_window_this_process_must_read_answers_503_not_500(client, proxied_redis, published):
    """SoldOutMiddleware reads the sale's window from Redis before the session when this process
    holds no copy of it (a sale it has not served yet, or a copy older than its few seconds).
    Cut off from Redis, that read is an outage like any other: 503, never 500 or "log in"."""
    sale, user = make_sale(stock=3), make_user()
    path = path_for(user.pk, sale.pk)
    client.cookies["sessionid"] = session_for(user)
    proxied_redis.set_mode("cut")
    for _ in range(3):  # the first meets the cut link, the next ones the open circuit
        sale_state.process_marks_clear(sale.pk)
        response = client.post(f"/seckill/{path}/doSeckill", {"goodsId": sale.pk}, HTTP_ACCEPT="application/json")
        assert_busy(response)


def test_a_cluster_client_that_reaches_no_node_is_an_outage_before_the_session_too(client, published, monkeypatch):
    """redis-py's cluster client raises RedisClusterException, not a RedisError, when it can
    reach no node to re-read the slot map (every node's circuit open): make partition-test's
    fault 2 met it in SoldOutMiddleware's window read, outside the 503 layer, as a 500. The
    middleware leaves such a request to the view, which meets the outage in its turn."""
    sale, user = make_sale(stock=3), make_user()
    path = path_for(user.pk, sale.pk)
    client.cookies["sessionid"] = session_for(user)

    def no_node_reached(sale_id, *, ask):
        raise RedisClusterException("Redis Cluster cannot be connected. Please provide at least one reachable node")

    monkeypatch.setattr("seckill.middleware.refusal_known", no_node_reached)
    response = client.post(f"/seckill/{path}/doSeckill", {"goodsId": sale.pk}, HTTP_ACCEPT="application/json")
    assert response.status_code == 200 and response.json()["data"]["status"] == "queued", response.content
