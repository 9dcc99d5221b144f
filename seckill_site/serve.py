"""The web server: `python -m seckill_site.serve [--bind HOST:PORT]` runs granian on the WSGI app.

granian was chosen by measurement (docs/performance.md, "Which web server"); the alternative is
deploy/gunicorn.conf.py. Environment (default):
  WEB_BIND           host:port (127.0.0.1:8000; --bind wins)
  WEB_CONCURRENCY    worker processes (2)
  WEB_THREADS        Django threads per worker (8: a request mostly waits on Redis)
  WEB_BACKLOG        the listen queue (2048)
  WEB_DRAIN_SECONDS  on SIGTERM, seconds /readyz answers 503 before granian stops (0): longer
                     than the balancer takes to mark a node down. Signal this launcher alone
                     (systemd: KillMode=mixed), not its process group.
  RELOAD=1           restart the workers on code changes
Any other granian option has its own GRANIAN_* variable. Workers count into
PROMETHEUS_MULTIPROC_DIR, which this launcher empties (or makes) first: granian has no hook for it."""

from __future__ import annotations

import argparse
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time


def _metrics_dir(bind: str) -> str:
    own = f"seckill-prometheus-{bind.replace(':', '-').replace('/', '-')}"
    directory = os.environ.get("PROMETHEUS_MULTIPROC_DIR") or os.path.join(tempfile.gettempdir(), own)
    if os.environ.get("PROMETHEUS_MULTIPROC_DIR_KEEP") != "1":
        # Files of an earlier run's processes would be added into this run's counts.
        shutil.rmtree(directory, ignore_errors=True)
    os.makedirs(directory, exist_ok=True)
    return directory


def command(bind: str) -> list[str]:
    host, _, port = bind.rpartition(":")
    reload = os.environ.get("RELOAD", "") not in ("", "0", "false", "False")
    return [
        sys.executable, "-m", "granian", "--interface", "wsgi", "seckill_site.wsgi:application",
        "--host", host or "127.0.0.1", "--port", port,
        "--workers", os.environ.get("WEB_CONCURRENCY", "2"),
        "--blocking-threads", os.environ.get("WEB_THREADS", "8"),
        "--backlog", os.environ.get("WEB_BACKLOG", "2048"),
        "--http", "1", "--no-ws",
        "--workers-kill-timeout", "10",  # SIGTERM: requests in flight get this long to finish
        "--respawn-failed-workers",
        *(["--reload", "--reload-ignore-dirs", ".run"] if reload else []),
    ]  # fmt: skip


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m seckill_site.serve", description=__doc__.splitlines()[0])
    parser.add_argument("--bind", default=os.environ.get("WEB_BIND", "127.0.0.1:8000"), help="host:port")
    options = parser.parse_args(argv)
    os.environ["PROMETHEUS_MULTIPROC_DIR"] = _metrics_dir(options.bind)
    args = command(options.bind)
    drain = float(os.environ.get("WEB_DRAIN_SECONDS", "0") or 0)
    if drain <= 0:
        os.execv(args[0], args)
    sys.exit(serve_draining(args, options.bind, drain))


def serve_draining(args: list[str], bind: str, drain: float) -> int:
    """Run granian as a child; on SIGTERM /readyz turns 503, and `drain` s later granian stops."""
    flag = os.environ.setdefault(
        "WEB_DRAIN_FILE", os.path.join(tempfile.gettempdir(), f"seckill-draining-{bind.replace(':', '-')}")
    )
    if os.path.exists(flag):
        os.unlink(flag)
    stopping: list[float] = []
    signal.signal(signal.SIGTERM, lambda signum, frame: stopping.append(time.monotonic()))
    signal.signal(signal.SIGINT, lambda signum, frame: stopping.append(0.0))  # Ctrl-C: no drain
    server = subprocess.Popen(args)
    told = False
    while server.poll() is None:
        if stopping and not told:
            with open(flag, "w") as out:
                out.write("stopping\n")
            if time.monotonic() - stopping[0] >= drain:
                server.send_signal(signal.SIGTERM)
                told = True
        time.sleep(0.05)
    if os.path.exists(flag):
        os.unlink(flag)
    return server.returncode


if __name__ == "__main__":
    main()
