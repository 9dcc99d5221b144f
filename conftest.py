"""Shared fixtures. Everything runs against real PostgreSQL and Redis; the burst tests add a
real Celery worker process that reads the test database."""

import os
import subprocess
import sys
import time
from contextlib import contextmanager
from pathlib import Path
from urllib.parse import quote

import pytest
from django.conf import settings
from hypothesis import settings as hypothesis_settings

from sales import sale_state
from seckill_site.broker import task_queue_empty, task_queues
from seckill_site.redis import client
from tools.missing import on_ci, packages_named
from tools.net import free_port
from tools.processes import http_ready, web_command, worker_command

# Hypothesis's per-example deadline is a timing test: on a busy two-core machine an example
# that renders a picture overran it at random. The properties here are about results; speed
# is `make bench`'s.
hypothesis_settings.register_profile("shop", deadline=None)
hypothesis_settings.load_profile("shop")

ROOT = Path(__file__).resolve().parent
# How long a test server or worker may take to start on a loaded machine before the test fails.
STARTUP_BOUND_S = 120


def redis_keys_delete(prefix: str) -> None:
    assert prefix, "tests run under a REDIS_KEY_PREFIX of their own"
    redis = client()
    found = list(redis.scan_iter(match=f"{prefix}*", count=1000))
    for start in range(0, len(found), 500):
        redis.delete(*found[start : start + 500])  # a cluster client splits these by slot


@pytest.fixture(autouse=True)
def clean_redis():
    """Each test starts with none of this run's keys (sessions, counters, rate limits: all under
    its REDIS_KEY_PREFIX) and empty per-process marks. Other keys on the server, the broker's
    among them, are left alone: the server may be a shared one, or a cluster."""
    redis_keys_delete(settings.REDIS_KEY_PREFIX)
    sale_state.process_marks_clear()
    yield


@pytest.fixture(autouse=True)
def default_language():
    """Each test starts in the default language. A request in Chinese (a language cookie) leaves
    Chinese active in the thread after it (LocaleMiddleware activates, nothing deactivates),
    and a later test calling a service directly would get its messages in Chinese."""
    from django.utils import translation

    translation.activate(settings.LANGUAGE_CODE)
    yield
    translation.activate(settings.LANGUAGE_CODE)


@pytest.fixture
def ratelimit_clock(monkeypatch):
    """django-ratelimit's windows are fixed, each key's with its own boundary: a test whose
    dozen requests straddle one would see its count restart. Hold its clock still."""
    import time
    import types

    from django_ratelimit import core

    now = time.time()
    monkeypatch.setattr(core, "time", types.SimpleNamespace(time=lambda: now))


@pytest.fixture
def published(monkeypatch):
    """Record the tasks services publish by name (seckill_site.publish) instead of sending them,
    as (name, kwargs) pairs: the test decides when, and how often, each is run."""
    from celery_app import app

    sent = []
    monkeypatch.setattr(app, "send_task", lambda name, kwargs=None, **options: sent.append((name, kwargs)))
    return sent


@pytest.fixture
def flushes(monkeypatch):
    """Record the sale ids of the order writer's flushes instead of publishing them (other
    tasks published meanwhile are dropped)."""
    from celery_app import app
    from seckill.services.writer import ORDER_FLUSH

    sent = []

    def send_task(name, kwargs=None, **options):
        if name == ORDER_FLUSH:
            sent.append(kwargs["sale_id"])

    monkeypatch.setattr(app, "send_task", send_task)
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


@contextmanager
def celery_worker_running(name: str = "test", **extra_env: str):
    """A real `celery worker` process (prefork, two children) on the test database, logging to
    .run/<name>-worker.log. `extra_env` goes on top of its environment; its queue is
    CELERY_TASK_DEFAULT_QUEUE there (this run's unless given), emptied first. Yields the process."""
    from celery_app import app

    env = dict(os.environ, DATABASE_URL=_test_database_url(), DJANGO_SETTINGS_MODULE="seckill_site.settings.test")
    env.update(extra_env)
    queue = env.setdefault("CELERY_TASK_DEFAULT_QUEUE", settings.CELERY_TASK_DEFAULT_QUEUE)
    declared = task_queues(queue, broker_url=settings.CELERY_BROKER_URL, expires_ms=settings.CELERY_QUEUE_EXPIRES_MS)
    with app.connection_for_write() as connection:
        task_queue_empty(connection, declared[0])
    (ROOT / ".run").mkdir(exist_ok=True)
    log_name = f"{name}-worker.log"
    log = open(ROOT / ".run" / log_name, "w")
    node = f"{name}-{os.getpid()}"
    command = worker_command(f"{node}@%h", concurrency=2, queue=queue, loglevel="info", heartbeat=False)
    process = subprocess.Popen(command, cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT)
    # Generous: on a shared 2-core machine under load a worker's start-up (Django, the task
    # modules, two prefork children) has taken over 30 s. It is a bound, not a wait: the ping
    # ends it as soon as the worker answers.
    deadline = time.monotonic() + STARTUP_BOUND_S
    while time.monotonic() < deadline:
        replies = app.control.ping(timeout=0.5, destination=[f"{node}@{os.uname().nodename}"])
        if replies:
            break
        if process.poll() is not None:
            raise RuntimeError(f"the Celery worker exited at start-up; see .run/{log_name}")
    else:
        process.kill()
        raise RuntimeError(f"the Celery worker did not answer a ping within {STARTUP_BOUND_S} s")
    try:
        yield process
    finally:
        process.terminate()
        try:
            process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            process.kill()


@pytest.fixture(scope="session")
def celery_worker(django_db_setup, django_db_blocker):
    """A real `celery worker` process (prefork, two children) on the test database and queue."""
    with celery_worker_running() as process:
        yield process


@contextmanager
def gunicorn_running(**extra_env: str):
    """The site under gunicorn with two worker processes on the test database (each worker has
    its own per-process sold-out marks, as in production); yields its URL."""
    port = free_port()
    env = dict(os.environ, DATABASE_URL=_test_database_url(), DJANGO_SETTINGS_MODULE="seckill_site.settings.test")
    env.update(extra_env)
    (ROOT / ".run").mkdir(exist_ok=True)
    log = open(ROOT / ".run" / "test-gunicorn.log", "w")
    command = web_command(host="127.0.0.1", port=port, server="gunicorn-gthread", workers=2, threads=8)
    process = subprocess.Popen(command, cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    if not http_ready(f"{url}/user/me", process, STARTUP_BOUND_S, ok=lambda status: True):
        process.kill()
        raise RuntimeError("gunicorn did not start; see .run/test-gunicorn.log")
    try:
        yield url
    finally:
        process.terminate()
        process.wait(timeout=15)


@pytest.fixture
def gunicorn_server(django_db_setup):
    with gunicorn_running() as url:
        yield url


# Fixtures that start server processes: a web server and a Celery worker (here), a private
# redis-server behind a fault proxy (seckill_site/tests/test_redis_breaker.py), a web server and
# a worker reaching PostgreSQL through one (seckill_site/tests/test_database_outage.py) and a
# primary and its replica (seckill/tests/test_durable.py). Their tests are marked `processes`,
# which `make test-fast` leaves out; a test that starts one itself takes @pytest.mark.processes.
PROCESS_FIXTURES = {
    "celery_worker",
    "gunicorn_server",
    "proxied_redis",
    "shop_on_proxied_postgres",
    "pair",
    "tls_server",
}


def pytest_collection_modifyitems(items) -> None:
    for item in items:
        if PROCESS_FIXTURES.intersection(getattr(item, "fixturenames", ())):
            item.add_marker(pytest.mark.processes)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    """Under CI=true a test skipped for want of a Debian package (tools.missing) fails, naming
    the package: a tier that did not run must not pass for one that did."""
    outcome = yield
    report = outcome.get_result()
    if not (report.skipped and on_ci()) or hasattr(report, "wasxfail"):
        return
    reason = report.longrepr[2] if isinstance(report.longrepr, tuple) else str(report.longrepr)
    packages = packages_named(reason)
    if packages:
        report.outcome = "failed"
        report.longrepr = f"CI=true and this tier did not run: install {' '.join(packages)} ({reason})"


def pytest_terminal_summary(terminalreporter) -> None:
    """The fuzz tests' tally: inputs sent and 5xx answers per endpoint (seckill_site.tests.fuzzing)."""
    fuzzing = sys.modules.get("seckill_site.tests.fuzzing")
    if fuzzing is None or not fuzzing.TALLY:
        return
    tally = fuzzing.TALLY
    terminalreporter.section("fuzz: inputs and 5xx per endpoint")
    for endpoint in sorted(tally):
        terminalreporter.write_line(f"{tally[endpoint]['inputs']:6d}  {tally[endpoint]['5xx']:3d}  {endpoint}")
    inputs, failures = sum(t["inputs"] for t in tally.values()), sum(t["5xx"] for t in tally.values())
    terminalreporter.write_line(f"{inputs:6d}  {failures:3d}  total over {len(tally)} endpoints")
