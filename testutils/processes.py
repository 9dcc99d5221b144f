"""The shop as server processes on the test database: a Celery worker, gunicorn, and the
DATABASE_URL a child process needs."""

import os
import subprocess
import time
from contextlib import contextmanager
from pathlib import Path
from urllib.parse import quote

from django.conf import settings

from seckill_site.broker import task_queue_empty, task_queues
from tools.net import free_port
from tools.processes import http_ready, web_command, worker_command

ROOT = Path(__file__).resolve().parent.parent


# How long a test server or worker may take to start on a loaded machine before the test fails.
STARTUP_BOUND_S = 120


def child_database_url() -> str:
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

    env = dict(os.environ, DATABASE_URL=child_database_url(), DJANGO_SETTINGS_MODULE="seckill_site.settings.test")
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


@contextmanager
def gunicorn_running(**extra_env: str):
    """The site under gunicorn with two worker processes on the test database (each worker has
    its own per-process sold-out marks, as in production); yields its URL."""
    port = free_port()
    env = dict(os.environ, DATABASE_URL=child_database_url(), DJANGO_SETTINGS_MODULE="seckill_site.settings.test")
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
