"""Shared fixtures. Everything runs against real PostgreSQL and Redis; the burst tests add a
real Celery worker process that reads the test database."""

import os
import subprocess
import sys
import time
from pathlib import Path
from urllib.parse import quote

import pytest
from django.conf import settings
from kombu import Exchange, Queue

from seckill import services as seckill_services
from seckill_site.redis import client

ROOT = Path(__file__).resolve().parent


@pytest.fixture(autouse=True)
def clean_redis():
    """Each test starts from an empty cache database (sessions, counters, rate limits) and
    empty per-process marks. The broker lives in another Redis database and is left alone."""
    client().flushdb()
    seckill_services.sold_out_clear()
    seckill_services._windows.clear()
    yield


@pytest.fixture
def queued(monkeypatch):
    """Record the order_write messages instead of publishing them (single-threaded tests
    only): the test decides when, and how often, each message is delivered."""
    from seckill.tasks import order_write

    sent = []
    monkeypatch.setattr(order_write, "apply_async", lambda kwargs, **options: sent.append(kwargs))
    return sent


@pytest.fixture(autouse=True)
def media_root(tmp_path, settings):
    settings.MEDIA_ROOT = str(tmp_path / "media")


def _test_database_url() -> str:
    """DATABASE_URL of the test database, for subprocesses (workers, gunicorn)."""
    db = settings.DATABASES["default"]
    host, port = db["HOST"] or "", db.get("PORT") or ""
    password = f":{quote(str(db['PASSWORD']))}" if db.get("PASSWORD") else ""
    if host.startswith("/"):
        # A Unix socket directory: django-environ reads it percent-encoded in the path, not the host.
        return f"postgres://{db['USER']}{password}@:{port}/{quote(host, safe='')}/{db['NAME']}"
    return f"postgres://{db['USER']}{password}@{host}{':' + str(port) if port else ''}/{db['NAME']}"


@pytest.fixture(scope="session")
def celery_worker(django_db_setup, django_db_blocker):
    """A real `celery worker` process (prefork, two children) on the test database and queue."""
    from celery_app import app

    env = dict(os.environ, DATABASE_URL=_test_database_url(), DJANGO_SETTINGS_MODULE="seckill_site.settings.test")
    queue = settings.CELERY_TASK_DEFAULT_QUEUE
    # Leftovers of an aborted run name rows that no longer exist. Declare first: AMQP refuses
    # to purge a queue it has never seen.
    with app.connection_for_write() as connection:
        Queue(queue, exchange=Exchange(queue), routing_key=queue)(connection.default_channel).declare()
        connection.default_channel.queue_purge(queue)
    (ROOT / ".run").mkdir(exist_ok=True)
    log = open(ROOT / ".run" / "test-worker.log", "w")
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "celery",
            "-A",
            "celery_app",
            "worker",
            "-Q",
            queue,
            "-c",
            "2",
            "--without-gossip",
            "--without-mingle",
            "--without-heartbeat",
            "-l",
            "info",
            "-n",
            f"test-{os.getpid()}@%h",
        ],
        cwd=ROOT,
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        replies = app.control.ping(timeout=0.5, destination=[f"test-{os.getpid()}@{os.uname().nodename}"])
        if replies:
            break
        if process.poll() is not None:
            raise RuntimeError("the Celery worker exited at start-up; see .run/test-worker.log")
    else:
        process.kill()
        raise RuntimeError("the Celery worker did not answer a ping within 30 s")
    yield process
    process.terminate()
    try:
        process.wait(timeout=15)
    except subprocess.TimeoutExpired:
        process.kill()


def free_port() -> int:
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.fixture
def gunicorn_server(django_db_setup):
    """The site under gunicorn with two worker processes, on the test database: each worker
    has its own per-process sold-out marks, as in production."""
    import requests

    port = free_port()
    env = dict(os.environ, DATABASE_URL=_test_database_url(), DJANGO_SETTINGS_MODULE="seckill_site.settings.test")
    (ROOT / ".run").mkdir(exist_ok=True)
    log = open(ROOT / ".run" / "test-gunicorn.log", "w")
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "gunicorn",
            "seckill_site.wsgi:application",
            "-b",
            f"127.0.0.1:{port}",
            "--workers",
            "2",
            "--worker-class",
            "gthread",
            "--threads",
            "8",
        ],
        cwd=ROOT,
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 30
    while True:
        try:
            requests.get(f"{url}/user/me", timeout=1)
            break
        except (requests.ConnectionError, requests.Timeout):  # a worker still importing on a busy machine
            if time.monotonic() > deadline or process.poll() is not None:
                process.kill()
                raise RuntimeError("gunicorn did not start; see .run/test-gunicorn.log") from None
            time.sleep(0.1)
    yield url
    process.terminate()
    process.wait(timeout=15)
