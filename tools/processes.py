"""The shop's processes as the harness starts them: the command lines of the web server, a Celery
worker and Celery beat, and the named process groups that the test fixtures, `make faults`, `make
cluster-test`, `make partition-test` and `make bench` start, signal and stop.

Each process runs in a session of its own, so a signal reaches its whole tree (the web server's
workers, Celery's pool) and a Ctrl-C in the terminal reaches only the harness, which then stops
its processes in order. Its output goes to `<logs>/<name>.log`.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import psutil

ROOT = Path(__file__).resolve().parent.parent

# The web servers the harness can start and compare; production runs granian (docs/performance.md).
SERVERS = ("granian", "gunicorn-gthread", "gunicorn-sync")
DEFAULT_SERVER = "granian"


class ServiceError(RuntimeError):
    """A server could not be started or stopped; the message says what to do."""


def number_read(path: Path) -> int | None:
    """The number a pid or port file holds; None when it is missing or holds none."""
    try:
        return int(path.read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return None


def process_of(pidfile: Path, name: str, arg: str) -> psutil.Process | None:
    """The process in `pidfile` if it is `name` with `arg` in its command line: pidfiles
    go stale and pids get reused, so a live pid alone proves nothing."""
    try:
        proc = psutil.Process(number_read(pidfile) or -1)  # -1: no pid -> ValueError
        return proc if name in proc.name() and arg in " ".join(proc.cmdline()) else None
    except (psutil.Error, ValueError):
        return None


def web_command(*, host: str, port: int, workers: int, threads: int, server: str = DEFAULT_SERVER) -> list[str]:
    """The web server's command line, with every server at the same address, backlog and keep-alive
    so that a comparison is of the servers alone. Production starts granian via seckill_site.serve."""
    if server in ("gunicorn-gthread", "gunicorn-sync"):
        # A keep-alive longer than gunicorn's 2 s: the tests prepare sessions, then buy on the same
        # connections, and one closed in that pause resets a POST (requests never retries one).
        return [sys.executable, "-m", "gunicorn", "seckill_site.wsgi:application", "-b", f"{host}:{port}",
                "--workers", str(workers), "--worker-class", server.removeprefix("gunicorn-"),
                "--threads", str(threads), "--backlog", "2048", "--keep-alive", "30",
                "--no-control-socket"]  # fmt: skip
    if server == "granian":
        # Django runs in each worker's blocking threads, `threads` of them like gthread's.
        return [sys.executable, "-m", "granian", "--interface", "wsgi", "seckill_site.wsgi:application",
                "--host", host, "--port", str(port), "--workers", str(workers),
                "--blocking-threads", str(threads), "--backlog", "2048", "--http", "1", "--no-ws",
                "--log-level", "warning"]  # fmt: skip
    raise ValueError(f"unknown server {server!r}: one of {', '.join(SERVERS)}")


def worker_command(node: str, *, concurrency: int, queue: str | None = None, loglevel: str = "warning",
                   heartbeat: bool = True) -> list[str]:  # fmt: skip
    """A Celery worker (prefork) named `node` ("name@%h"). No gossip or mingle: the shop uses
    neither, and they cost every start a round of broadcasts. `heartbeat=False` for a worker
    alone on a private queue (the tests', the bench's), where nobody watches for it."""
    return [sys.executable, "-m", "celery", "-A", "celery_app", "worker", "-c", str(concurrency), "-n", node,
            *(["-Q", queue] if queue else []), "--without-gossip", "--without-mingle",
            *([] if heartbeat else ["--without-heartbeat"]), "-l", loglevel]  # fmt: skip


def beat_command(schedule: Path, loglevel: str = "warning") -> list[str]:
    return [sys.executable, "-m", "celery", "-A", "celery_app", "beat", "-l", loglevel, "--schedule", str(schedule)]


def http_ready(url: str, process: subprocess.Popen | None, timeout: float, *, ok=lambda status: status < 500,
               verify: bool | str = True) -> bool:  # fmt: skip
    """Until `url` answers with a status `ok` accepts (True), `timeout` seconds pass or
    `process` exits (False). A bound, not a wait: the first good answer ends it."""
    import requests

    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process is not None and process.poll() is not None:
            return False
        try:
            if ok(requests.get(url, timeout=5, verify=verify).status_code):
                return True
        except requests.RequestException:  # not listening yet, or a worker still importing
            pass
        time.sleep(0.1)
    return False


def tree(pid: int | None) -> list[int]:
    """`pid` and all its descendants, or [] when it is gone."""
    if not pid:
        return []
    try:
        parent = psutil.Process(pid)
        return [parent.pid, *(child.pid for child in parent.children(recursive=True))]
    except psutil.Error:
        return []


HostPrefix = Callable[[str | None], list[str]]


class Processes(dict[str, subprocess.Popen]):
    """Named process groups: name -> the group leader's Popen.

    `host_prefix(host)` is the command prefix that runs a process on a simulated host (`ip
    netns exec NS` in make partition-test; nothing on loopback). With `pid_dir`, each group's
    id is recorded there, so a later run can stop what a killed run left (`stop_leftovers`)."""

    def __init__(self, logs: Path, *, env: dict[str, str] | None = None, cwd: Path = ROOT,
                 pid_dir: Path | None = None, host_prefix: HostPrefix | None = None) -> None:  # fmt: skip
        super().__init__()
        self.logs, self.env, self.cwd, self.pid_dir = logs, env, cwd, pid_dir
        self.host_prefix = host_prefix or (lambda host: [])

    def spawn(self, name: str, command: list[str], *, env: dict[str, str] | None = None, cwd: Path | None = None,
              host: str | None = None) -> subprocess.Popen:  # fmt: skip
        command = [*self.host_prefix(host), *command]
        self.logs.mkdir(parents=True, exist_ok=True)
        with open(self.logs / f"{name}.log", "a") as output:
            output.write(f"--- {time.strftime('%H:%M:%S', time.gmtime())} {' '.join(command)}\n")
            output.flush()
            process = subprocess.Popen(
                command,
                cwd=cwd or self.cwd,
                env=env or self.env,
                stdout=output,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
                start_new_session=True,
            )
        self[name] = process
        if self.pid_dir is not None:
            self.pid_dir.mkdir(parents=True, exist_ok=True)
            (self.pid_dir / name).write_text(f"{process.pid}\n")
        return process

    def running(self, name: str) -> bool:
        process = self.get(name)
        return process is not None and process.poll() is None

    def signal(self, name: str, signum: int) -> None:
        if self.running(name):
            try:
                os.killpg(self[name].pid, signum)
            except ProcessLookupError:
                pass

    def forget(self, name: str) -> subprocess.Popen | None:
        """Take `name` out of the records without stopping it (a test that stops it itself)."""
        if self.pid_dir is not None:
            (self.pid_dir / name).unlink(missing_ok=True)
        return self.pop(name, None)

    def halt(self, name: str, *, timeout: float = 20) -> None:
        """SIGTERM the group (after a SIGCONT: a frozen process cannot exit), SIGKILL it if it
        has not gone within `timeout`, then any children that outlived their leader."""
        process = self.forget(name)
        if process is None:
            return
        if process.poll() is None:
            try:
                os.killpg(process.pid, signal.SIGCONT)
                os.killpg(process.pid, signal.SIGTERM)
                process.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                os.killpg(process.pid, signal.SIGKILL)
                process.wait(timeout=10)
            except ProcessLookupError:
                pass
        try:
            os.killpg(process.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass

    def kill(self, name: str) -> None:
        """kill -9 the whole group, as a crashed host would leave it."""
        self.signal(name, signal.SIGKILL)
        process = self.forget(name)
        if process is not None:
            process.wait(timeout=10)

    def halt_all(self, order: tuple[str, ...] | list[str] = (), *, timeout: float = 20) -> None:
        """Halt `order` first, one after the other, then the rest."""
        for name in [*order, *(name for name in list(self) if name not in order)]:
            self.halt(name, timeout=timeout)

    def pids(self, name: str) -> list[int]:
        """Every process of group `name`, leader first; [] once it has exited."""
        return tree(self[name].pid) if self.running(name) else []

    def stop_leftovers(self) -> None:
        """Kill the groups in `pid_dir` left by an earlier run that died without its teardown."""
        for record in self.pid_dir.glob("*") if self.pid_dir is not None and self.pid_dir.exists() else []:
            try:
                pgid = int(record.read_text().split()[0])
                if os.getpgid(pgid) == pgid:  # still the leader of its own group
                    os.killpg(pgid, signal.SIGKILL)
            except (ValueError, IndexError, ProcessLookupError, PermissionError):
                pass
            record.unlink()
