"""Request ids and the JSON logs of production: the web's request line and the order writer's
line carry the same id."""

import json
import os
import secrets
import subprocess
import sys
import time

import pytest
import requests

from testutils.factories.sales import make_sale
from testutils.factories.users import make_user
from testutils.processes import ROOT, child_database_url
from testutils.shoppers import path_for, shopper
from tools.net import free_port


@pytest.mark.django_db
def test_the_request_id_is_taken_or_made_and_returned(client):
    assert client.get("/healthz", HTTP_X_REQUEST_ID="lb-1234.abc")["X-Request-ID"] == "lb-1234.abc"
    made = client.get("/healthz")["X-Request-ID"]
    assert len(made) == 32 and int(made, 16) >= 0 and made != client.get("/healthz")["X-Request-ID"]
    # Anything that does not look like an id is not echoed (nor logged): a new one is made.
    assert client.get("/healthz", HTTP_X_REQUEST_ID="bad id\r\n<script>")["X-Request-ID"] != "bad id"


def _json_lines(path) -> list[dict]:
    lines = []
    for line in path.read_text().splitlines():
        if line.startswith("{"):
            lines.append(json.loads(line))  # every record is one JSON object on one line
    return lines


def _wait(check, seconds: float, what: str):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        found = check()
        if found:
            return found
        time.sleep(0.2)
    raise AssertionError(f"{what} within {seconds} s")


@pytest.mark.slow
@pytest.mark.django_db(transaction=True)
def test_production_logs_one_json_line_per_request_and_the_order_writer_carries_its_id(tmp_path):
    port, queue = free_port(), f"seckill-logs-{os.getpid()}"
    env = dict(
        os.environ,
        DATABASE_URL=child_database_url(),
        DJANGO_SETTINGS_MODULE="seckill_site.settings.production",
        SECRET_KEY=secrets.token_urlsafe(50),
        ALLOWED_HOSTS="127.0.0.1",
        SECURE_SSL_REDIRECT="False",
        SESSION_COOKIE_SECURE="False",
        CSRF_COOKIE_SECURE="False",
        CELERY_TASK_DEFAULT_QUEUE=queue,
    )
    web_log, worker_log = tmp_path / "web.log", tmp_path / "worker.log"
    web = subprocess.Popen(
        [sys.executable, "-m", "gunicorn", "seckill_site.wsgi:application", "-b", f"127.0.0.1:{port}",
         "--worker-class", "gthread", "--threads", "4", "--no-control-socket"],
        cwd=ROOT, env=env, stdout=open(web_log, "w"), stderr=subprocess.STDOUT,
    )  # fmt: skip
    worker = subprocess.Popen(
        [sys.executable, "-m", "celery", "-A", "celery_app", "worker", "-Q", queue, "-c", "1", "-l", "info",
         "--without-gossip", "--without-mingle", "--without-heartbeat", "-n", f"logs-{os.getpid()}@%h"],
        cwd=ROOT, env=env, stdout=open(worker_log, "w"), stderr=subprocess.STDOUT,
    )  # fmt: skip
    url = f"http://127.0.0.1:{port}"
    try:
        sale, users = make_sale(stock=2), [make_user(), make_user()]

        def up() -> bool:
            assert web.poll() is None, web_log.read_text()
            try:
                return requests.get(f"{url}/healthz", timeout=2).ok
            except (requests.ConnectionError, requests.Timeout):
                return False

        _wait(up, 30, "gunicorn up")
        lines = {}
        for user in users:  # two buys: the batch writer may write both orders in one flush
            buyer = shopper(user)
            request_id = "test-" + secrets.token_hex(8)
            response = buyer.post(
                f"{url}/seckill/{path_for(user.pk, sale.pk)}/doSeckill",
                {"goodsId": sale.pk},
                headers={"X-Request-ID": request_id},
            )
            assert response.json()["data"]["status"] == "queued", response.text
            assert response.headers["X-Request-ID"] == request_id

            line = _wait(
                lambda request_id=request_id: next(
                    (r for r in _json_lines(web_log) if r.get("request_id") == request_id), None
                ),
                10,
                "the request's JSON line",
            )
            assert line["logger"] == "seckill.request" and line["status"] == 200
            assert line["user_id"] == user.pk and line["sale"] == sale.pk and line["outcome"] == "queued"
            assert line["duration_ms"] > 0 and line["path"] == "/seckill/<path>/doSeckill" and "time" in line
            assert line["reservation"]
            lines[user.pk] = line

        # The order writer's line for each order carries the buy's own request id and the
        # reservation its request line names, whichever buy published the flush.
        for user in users:
            line = lines[user.pk]
            written = _wait(
                lambda line=line: next(
                    (r for r in _json_lines(worker_log) if r.get("reservation") == line["reservation"]), None
                ),
                60,
                "the order writer's JSON line with the reservation",
            )
            assert written["outcome"] == "created" and written["sale"] == sale.pk and written["user_id"] == user.pk
            assert written["task"] == "seckill.order_flush" and written["request_id"] == line["request_id"]
    finally:
        for process in (web, worker):
            process.terminate()
        for process in (web, worker):
            try:
                process.wait(15)
            except subprocess.TimeoutExpired:
                process.kill()
