"""A production-like deployment on this machine: gunicorn (DEBUG off, settings.bench) and a
Celery worker, on the PostgreSQL and Redis named by DATABASE_URL / REDIS_URL."""

from __future__ import annotations

import os
import secrets
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import psutil
import requests

ROOT = Path(__file__).resolve().parent.parent
PORTS = range(8100, 8200)
# The web servers the bench can deploy (`--server`). gunicorn-sync answers one request per
# process at a time and closes the connection after each; gthread keeps them alive. granian
# parses HTTP in Rust and runs Django in its blocking threads: it won the floor and the burst
# in every comparison on the 2-core machine (docs/performance.md), so it is the default.
SERVERS = ("granian", "gunicorn-gthread", "gunicorn-sync")
DEFAULT_SERVER = "granian"


def free_port() -> int:
    for port in PORTS:
        with socket.socket() as sock:
            try:
                sock.bind(("127.0.0.1", port))
            except OSError:
                continue
            return port
    raise RuntimeError(f"no free port in {PORTS.start}-{PORTS.stop - 1}")


def _autogroup_nice(pid: int, nice: int) -> None:
    """Where the kernel groups processes by session for scheduling (autogroup), a process's
    nice value only ranks it among its own session: a worker spawned in a session of its own
    (as here, to stop its whole tree at once) competes with gunicorn as an equal whatever its
    nice. The session's own nice value ranks the groups."""
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


class Deployment:
    # Set by a deployment whose web tier is given (the cluster's): the bench does not choose
    # the worker count, and says what it is instead.
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
        self.processes: dict[str, subprocess.Popen] = {}
        self.web_config: tuple[int, int] = (0, 0)
        self.server = DEFAULT_SERVER
        self.env = dict(
            os.environ,
            DJANGO_SETTINGS_MODULE="seckill_site.settings.bench",
            SECRET_KEY=self.secret_key,
            ALLOWED_HOSTS="127.0.0.1,localhost",
            LOG_LEVEL="WARNING",
            PYTHONUNBUFFERED="1",
        )

    def _spawn(self, name: str, command: list[str]) -> subprocess.Popen:
        log = open(self.log_dir / f"{name}.log", "a")
        # Own process group: stopping it reaches gunicorn's workers and Celery's pool too.
        process = subprocess.Popen(
            command, cwd=ROOT, env=self.env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True
        )
        self.processes[name] = process
        return process

    def migrate(self) -> None:
        subprocess.run([sys.executable, "manage.py", "migrate", "-v", "0"], cwd=ROOT, env=self.env, check=True)

    def web_command(self, *, server: str, workers: int, threads: int) -> list[str]:
        """The web server's command line: each server at the same address, backlog and
        keep-alive, so the comparison is of the servers and nothing else."""
        bind = ["-b", f"127.0.0.1:{self.port}"]
        if server in ("gunicorn-gthread", "gunicorn-sync"):
            return [sys.executable, "-m", "gunicorn", "seckill_site.wsgi:application", *bind,
                    "--workers", str(workers), "--worker-class", server.removeprefix("gunicorn-"),
                    "--threads", str(threads), "--backlog", "2048", "--keep-alive", "30",
                    "--no-control-socket"]  # fmt: skip
        if server == "granian":
            # Rust HTTP/1 on its own runtime thread per worker; Django runs in the worker's
            # blocking threads (the WSGI interface), `threads` of them like gthread's.
            return [sys.executable, "-m", "granian", "--interface", "wsgi", "seckill_site.wsgi:application",
                    "--host", "127.0.0.1", "--port", str(self.port), "--workers", str(workers),
                    "--blocking-threads", str(threads), "--backlog", "2048", "--http", "1", "--no-ws",
                    "--log-level", "warning"]  # fmt: skip
        raise ValueError(f"unknown server {server!r}: one of {', '.join(SERVERS)}")

    def start_web(self, *, workers: int, threads: int, server: str = DEFAULT_SERVER) -> None:
        self.stop_process("web")
        self._spawn("web", self.web_command(server=server, workers=workers, threads=threads))
        self.web_config = (workers, threads)
        self.server = server
        deadline = time.monotonic() + 60
        while True:
            try:
                if requests.get(f"{self.url}{self.ready_path}", timeout=2, verify=self.verify).status_code < 500:
                    break
            except requests.RequestException:
                pass
            if time.monotonic() > deadline or self.processes["web"].poll() is not None:
                raise RuntimeError(f"{server} did not start; see {self.log_dir / 'web.log'}")
            time.sleep(0.2)
        # Every worker answers (and has imported everything) before anything is measured.
        while len(self.web_workers()) < workers and time.monotonic() < deadline:
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
        worker = self._spawn("celery", [*nice, sys.executable, "-m", "celery", "-A", "celery_app", "worker",
                                        "-Q", queue, "-c", str(self.celery_concurrency),
                                        "-n", f"bench-{os.getpid()}@%h", "--without-gossip", "--without-mingle",
                                        "--without-heartbeat", "-l", "warning"])  # fmt: skip
        if self.celery_nice:
            _autogroup_nice(worker.pid, self.celery_nice)
        deadline = time.monotonic() + 60
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
        process = self.processes.get(name)
        if process is None or process.poll() is not None:
            return []
        try:
            parent = psutil.Process(process.pid)
            return [parent.pid, *(child.pid for child in parent.children(recursive=True))]
        except psutil.Error:
            return []

    def cpu_seconds(self) -> dict[int, tuple[str, float]]:
        """pid -> (group, CPU seconds so far) for every process on the machine; groups are
        our process trees ("web", "celery"), "postgres", "redis", or "other"."""
        return cpu_snapshot({pid: name for name in self.processes for pid in self.pids(name)})

    def describe(self) -> str:
        """The deployment in the table's title."""
        workers, threads = self.web_config
        return f"{self.server} {workers}x{threads}, celery -c {self.celery_concurrency}"

    def stop_process(self, name: str) -> None:
        process = self.processes.pop(name, None)
        if process is None or process.poll() is not None:
            return
        try:
            os.killpg(process.pid, signal.SIGTERM)
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait(timeout=10)
        except ProcessLookupError:
            pass

    def stop(self) -> None:
        for name in list(self.processes):
            self.stop_process(name)
