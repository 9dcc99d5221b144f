"""A production-like deployment on this machine: granian (DEBUG off, lab.bench.settings; --server picks another) and a
Celery worker, on the PostgreSQL and Redis named by DATABASE_URL / REDIS_URL."""

from __future__ import annotations

import os
import secrets
import subprocess
import sys
import time
from pathlib import Path

import psutil

from tools.net import free_port
from tools.processes import DEFAULT_SERVER, SERVERS, Processes, http_ready, web_command, worker_command

ROOT = Path(__file__).resolve().parent.parent
__all__ = ["DEFAULT_SERVER", "SERVERS", "Deployment", "cpu_snapshot"]


def _autogroup_nice(pid: int, nice: int) -> None:
    """Give `pid`'s session the nice value too: under autogroup the kernel shares the CPU between
    sessions first, so a worker in a session of its own competes with the web server as an equal."""
    try:
        Path(f"/proc/{pid}/autogroup").write_text(str(nice))
    except OSError:
        pass  # no autogroup (or not allowed): the plain nice value applies


def cpu_snapshot(ours: dict[int, str]) -> dict[int, tuple[str, float]]:
    """pid -> (group, CPU seconds so far) for every process on the machine: `ours` names the
    deployment's own processes' groups; the rest are "postgres", "redis" or "other"."""
    snapshot = {}
    for process in psutil.process_iter(["name", "cpu_times"]):
        times = process.info["cpu_times"]
        if times is None:
            continue
        name = process.info["name"] or ""
        group = ours.get(process.pid) or (
            "postgres" if name.startswith("postgres") else "redis" if name.startswith("redis") else "other"
        )
        snapshot[process.pid] = (group, times.user + times.system)
    return snapshot


def driver_draw_key() -> str:
    """The draw key of the process driving a deployment. The driver sets sales to draw in the
    same database, so the deployment's workers must derive the same seeds (sales.draw_seed), as
    every node of one shop does; "" (the deployment derives its own) where it has no Django."""
    from django.conf import settings

    if not settings.configured:
        return ""
    return settings.DRAW_SEED_KEY or settings.SECRET_KEY


class Deployment:
    # A given web tier (the cluster's), which the bench then reports instead of choosing workers.
    web_fixed: str | None = None
    # Set by a deployment whose database and Redis are thrown away with it: nothing to clean up.
    throwaway = False
    # What start_web asks until the server answers (the bench's floor view; `make scan`, whose
    # deployment routes no bench URL, asks /healthz), and the TLS check of that request.
    ready_path = "/bench/floor"
    verify: bool | str = True

    def __init__(self, *, log_dir: Path, celery_concurrency: int, celery_nice: int = 0) -> None:
        self.log_dir = log_dir
        self.celery_concurrency = celery_concurrency
        self.celery_nice = celery_nice
        self.secret_key = secrets.token_urlsafe(50)
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.web_config: tuple[int, int] = (0, 0)
        self.server = DEFAULT_SERVER
        self.env = dict(
            os.environ,
            DJANGO_SETTINGS_MODULE="lab.bench.settings",
            SECRET_KEY=self.secret_key,
            DRAW_SEED_KEY=driver_draw_key(),
            ALLOWED_HOSTS="127.0.0.1,localhost",
            LOG_LEVEL="WARNING",
            PYTHONUNBUFFERED="1",
        )
        self.processes = Processes(log_dir, env=self.env)

    def migrate(self) -> None:
        subprocess.run([sys.executable, "manage.py", "migrate", "-v", "0"], cwd=ROOT, env=self.env, check=True)

    def start_web(self, *, workers: int, threads: int, server: str = DEFAULT_SERVER) -> None:
        self.processes.halt("web")
        command = web_command(host="127.0.0.1", port=self.port, server=server, workers=workers, threads=threads)
        process = self.processes.spawn("web", command)
        self.web_config = (workers, threads)
        self.server = server
        started = time.monotonic()
        if not http_ready(f"{self.url}{self.ready_path}", process, 60, verify=self.verify):
            raise RuntimeError(f"{server} did not start; see {self.log_dir / 'web.log'}")
        # Every worker answers (and has imported everything) before anything is measured.
        while len(self.web_workers()) < workers and time.monotonic() < started + 60:
            time.sleep(0.1)

    def web_workers(self) -> list[int]:
        """The web server's worker processes (those that run Django), not its supervisor."""
        return self.pids("web")[1:]

    def start_celery(self, queue: str) -> None:
        from django.conf import settings

        from celery_app import app
        from seckill_site.broker import task_queue_empty, task_queues

        with app.connection_for_write() as connection:
            task_queue_empty(connection, task_queues(queue, broker_url=settings.CELERY_BROKER_URL)[0])
        self.queue = queue
        self.celery_node = f"bench-{os.getpid()}@{os.uname().nodename}"
        nice = ["nice", "-n", str(self.celery_nice)] if self.celery_nice else []
        command = worker_command(f"bench-{os.getpid()}@%h", concurrency=self.celery_concurrency, queue=queue,
                                 heartbeat=False)  # fmt: skip
        worker = self.processes.spawn("celery", [*nice, *command])
        if self.celery_nice:
            _autogroup_nice(worker.pid, self.celery_nice)
        # A niced worker on a busy machine can take minutes to start.
        deadline = time.monotonic() + 180
        while not app.control.ping(timeout=0.5, destination=[self.celery_node]):
            if time.monotonic() > deadline or self.processes["celery"].poll() is not None:
                raise RuntimeError(f"the Celery worker did not start; see {self.log_dir / 'celery.log'}")

    def celery_pause(self) -> None:
        """The worker stops taking messages (they wait in the queue) until celery_resume."""
        from celery_app import app

        if not app.control.cancel_consumer(self.queue, destination=[self.celery_node], reply=True, timeout=5):
            raise RuntimeError("the Celery worker did not stop consuming")

    def celery_resume(self) -> None:
        from celery_app import app

        # The worker declares the queue from its own settings (CELERY_TASK_QUEUES), by name.
        if not app.control.add_consumer(self.queue, destination=[self.celery_node], reply=True, timeout=5):
            raise RuntimeError("the Celery worker did not resume consuming")

    def broker_queue_bytes(self) -> int | None:
        """MEMORY USAGE of the task queue when the broker is Redis (None for another broker)."""
        from django.conf import settings
        from redis import Redis

        url = settings.CELERY_BROKER_URL
        if not url.startswith(("redis://", "rediss://")):
            return None
        with Redis.from_url(url) as broker:
            return broker.memory_usage(self.queue, samples=0) or 0

    def pids(self, name: str) -> list[int]:
        return self.processes.pids(name)

    def cpu_seconds(self) -> dict[int, tuple[str, float]]:
        """cpu_snapshot with this deployment's process trees as groups ("web", "celery")."""
        return cpu_snapshot({pid: name for name in self.processes for pid in self.pids(name)})

    def describe(self) -> str:
        """The deployment in the table's title."""
        workers, threads = self.web_config
        return f"{self.server} {workers}x{threads}, celery -c {self.celery_concurrency}"

    def stop(self) -> None:
        self.processes.halt_all()
