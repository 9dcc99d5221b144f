"""/metrics: who may read it, and that a purchase moves the shop's counters."""

import os
import subprocess
import sys
import time

import pytest
import requests

from sales import sale_state
from testutils.factories.sales import make_sale
from testutils.factories.users import make_user
from testutils.metrics import SCRAPER, TOKEN, scrape
from testutils.processes import ROOT, child_database_url
from testutils.shoppers import path_for
from tools.net import free_port

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def _scrape_token(settings):
    settings.METRICS_TOKEN = TOKEN


def read(client) -> dict[tuple[str, tuple], float]:
    response = client.get("/metrics", headers=SCRAPER)
    assert response.status_code == 200, response.content
    return scrape(response.content.decode())


def test_a_purchase_moves_the_counters(client, flushes):
    from seckill.tasks import order_flush

    sale, user = make_sale(stock=3), make_user()
    client.force_login(user)
    before = read(client)
    queued_key = ("seckill_attempts_total", (("outcome", "queued"),))
    created_key = ("seckill_order_writes_total", (("outcome", "created"),))
    do_key = (
        "seckill_http_requests_total",
        (("method", "POST"), ("status", "200"), ("view", "seckill/<str:path>/doSeckill")),
    )

    body = client.post(f"/seckill/{path_for(user.pk, sale.pk)}/doSeckill", {"goodsId": sale.pk}).json()
    assert body["data"]["status"] == "queued"
    waiting = read(client)
    assert waiting[("seckill_reservations_waiting", ())] == 1
    assert 0 <= waiting[("seckill_reservation_oldest_age_seconds", ())] < 60
    assert waiting[queued_key] == before.get(queued_key, 0) + 1
    assert waiting[do_key] == before.get(do_key, 0) + 1

    assert order_flush(sale_id=flushes[0])["orders_created"] == 1  # the task's body, in this process
    after = read(client)
    assert after[created_key] == before.get(created_key, 0) + 1
    assert after[("seckill_reservations_waiting", ())] == 0
    assert after[("seckill_shop_metrics_up", (("source", "broker"),))] == 1
    assert any(name == "seckill_queue_depth" for name, _labels in after)

    # A second buy of the same user: "already bought" (a fresh path, the same buyer).
    client.post(f"/seckill/{path_for(user.pk, sale.pk)}/doSeckill", {"goodsId": sale.pk})
    bought_key = ("seckill_attempts_total", (("outcome", "already_bought"),))
    assert read(client)[bought_key] == before.get(bought_key, 0) + 1


def test_sold_out_answers_before_routing_are_counted_too(client, flushes, monkeypatch):
    # The mark lasts a second in production; the steps between the two buys (a scrape, a login,
    # a captcha) took longer than that on a loaded machine, and the second buy went to Redis.
    monkeypatch.setattr(sale_state.marks, "SOLD_OUT_MARK_SECONDS", 600.0)
    first, second = make_user(), make_user()
    sale = make_sale(stock=1)
    client.force_login(first)
    assert client.post(f"/seckill/{path_for(first.pk, sale.pk)}/doSeckill", {"goodsId": sale.pk}).json()["code"] == 0
    before = read(client)  # the last unit went: this process now knows the sale is sold out
    client.force_login(second)
    body = client.post(f"/seckill/{path_for(second.pk, sale.pk)}/doSeckill", {"goodsId": sale.pk}).json()
    assert body["msg"] == "sold out"
    after = read(client)
    sold_out = ("seckill_attempts_total", (("outcome", "sold_out"),))
    early = (
        "seckill_http_requests_total",
        (("method", "POST"), ("status", "200"), ("view", "<sold out before routing>")),
    )
    assert after[sold_out] == before.get(sold_out, 0) + 1
    assert after[early] == before.get(early, 0) + 1


def test_metrics_only_for_configured_networks_or_the_token(client, settings):
    assert client.get("/metrics", REMOTE_ADDR="203.0.113.9").status_code == 403
    settings.METRICS_TOKEN = "s3cret-token"
    assert client.get("/metrics", REMOTE_ADDR="203.0.113.9", HTTP_AUTHORIZATION="Bearer wrong").status_code == 403
    allowed = client.get("/metrics", REMOTE_ADDR="203.0.113.9", HTTP_AUTHORIZATION="Bearer s3cret-token")
    assert allowed.status_code == 200 and b"seckill_http_requests_total" in allowed.content
    settings.METRICS_ALLOWED_NETWORKS = ["203.0.113.0/24"]
    assert client.get("/metrics", REMOTE_ADDR="203.0.113.9").status_code == 200
    assert client.get("/metrics", REMOTE_ADDR="127.0.0.1").status_code == 403


@pytest.mark.slow
@pytest.mark.parametrize("server", ["granian", "gunicorn"])
def test_every_web_worker_counts(django_db_setup, tmp_path, server):
    """Multiprocess mode: requests served by either of two workers all show in one scrape,
    under the shop's server (granian, through seckill_site.serve) and the alternative."""
    port = free_port()
    env = dict(
        os.environ,
        DATABASE_URL=child_database_url(),
        DJANGO_SETTINGS_MODULE="seckill_site.settings.test",
        PROMETHEUS_MULTIPROC_DIR=str(tmp_path),
        WEB_CONCURRENCY="2",
        WEB_THREADS="2",
        METRICS_TOKEN=TOKEN,
    )
    commands = {
        "granian": [sys.executable, "-m", "seckill_site.serve", "--bind", f"127.0.0.1:{port}"],
        "gunicorn": [sys.executable, "-m", "gunicorn", "seckill_site.wsgi:application", "-b", f"127.0.0.1:{port}",
                     "--workers", "2", "--worker-class", "gthread", "--threads", "2", "--no-control-socket"],
    }  # fmt: skip
    if server == "granian":  # a file an earlier run left: the launcher empties the directory
        (tmp_path / "stale.db").write_text("")
    (ROOT / ".run").mkdir(exist_ok=True)
    log = open(ROOT / ".run" / f"test-metrics-{server}.log", "w")
    web = subprocess.Popen(commands[server], cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                requests.get(f"{url}/metrics", timeout=2)
                break
            except (requests.ConnectionError, requests.Timeout):
                assert time.monotonic() < deadline and web.poll() is None, f"{server} did not start"
                time.sleep(0.2)
        for _ in range(40):  # a new connection each: both workers get some
            assert requests.get(f"{url}/healthz", timeout=5, headers={"Connection": "close"}).status_code == 200
        samples = scrape(requests.get(f"{url}/metrics", timeout=10, headers=SCRAPER).text)
        key = ("seckill_http_requests_total", (("method", "GET"), ("status", "200"), ("view", "healthz")))
        assert samples[key] == 40
        pids = {path.stem.rpartition("_")[2] for path in tmp_path.glob("counter_*.db")}
        assert len(pids) >= 2, pids  # one file per worker process, and both served
        if server == "granian":
            assert not (tmp_path / "stale.db").exists()
    finally:
        web.terminate()
        web.wait(15)


@pytest.mark.slow
@pytest.mark.django_db(transaction=True)
def test_a_celery_worker_serves_its_own_metrics(tmp_path):
    """CELERY_METRICS_PORT: the worker's main process serves what its prefork children counted."""
    from django.conf import settings

    from seckill.tasks import order_flush
    from seckill_site.broker import task_queues
    from testutils.shoppers import reserve_directly

    port, queue = free_port(), f"seckill-metrics-{os.getpid()}"
    env = dict(
        os.environ,
        DATABASE_URL=child_database_url(),
        DJANGO_SETTINGS_MODULE="seckill_site.settings.test",
        CELERY_TASK_DEFAULT_QUEUE=queue,
        CELERY_METRICS_PORT=str(port),
        PROMETHEUS_MULTIPROC_DIR=str(tmp_path),
    )
    worker = subprocess.Popen(
        [sys.executable, "-m", "celery", "-A", "celery_app", "worker", "-Q", queue, "-c", "2",
         "--without-gossip", "--without-mingle", "--without-heartbeat", "-n", f"metrics-{os.getpid()}@%h"],
        cwd=ROOT, env=env, stdout=open(tmp_path / "worker.log", "w"), stderr=subprocess.STDOUT,
    )  # fmt: skip
    try:
        sale, user = make_sale(stock=2), make_user()
        left, request_id = reserve_directly(user.pk, sale.pk)
        assert left == 1
        destination = task_queues(queue, broker_url=settings.CELERY_BROKER_URL)[0]
        order_flush.apply_async(kwargs={"sale_id": sale.pk}, queue=destination)
        key = ("seckill_order_writes_total", (("outcome", "created"),))
        deadline = time.monotonic() + 60
        while True:
            assert worker.poll() is None, (tmp_path / "worker.log").read_text()
            try:
                if scrape(requests.get(f"http://127.0.0.1:{port}/metrics", timeout=2).text).get(key) == 1:
                    break
            except (requests.ConnectionError, requests.Timeout):
                pass
            assert time.monotonic() < deadline, "the worker's /metrics never counted the order"
            time.sleep(0.3)
    finally:
        worker.terminate()
        try:
            worker.wait(15)
        except subprocess.TimeoutExpired:
            worker.kill()
