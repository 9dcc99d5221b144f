"""gunicorn settings for `make run` and production: `gunicorn -c deploy/gunicorn.conf.py seckill_site.wsgi`.

gthread workers: a request mostly waits on Redis (the gate) or PostgreSQL, so a few processes
with threads each serve a burst without one process per connection. The listen backlog is
what runserver lacked: it listens with a queue of 5, and a 64-connection burst overflowed it
(connections reset); here the kernel queues 2048 (capped by net.core.somaxconn).
Everything can be overridden by the environment (GUNICORN_CMD_ARGS, or the variables below).
"""

import os
import shutil
import tempfile

bind = os.environ.get("GUNICORN_BIND", "127.0.0.1:8000")
worker_class = "gthread"
workers = int(os.environ.get("WEB_CONCURRENCY", "2"))
threads = int(os.environ.get("GUNICORN_THREADS", "8"))
backlog = int(os.environ.get("GUNICORN_BACKLOG", "2048"))
# Keep-alive connections from the balancer (or wrk) are reused rather than reopened.
keepalive = 5
timeout = 30
graceful_timeout = 10
# Heartbeat files in memory: a worker is never killed because a disk was slow.
worker_tmp_dir = "/dev/shm" if os.path.isdir("/dev/shm") else None
# Reload on code change only when asked (`make run RELOAD=1`); `make dev` uses runserver's.
reload = os.environ.get("RELOAD", "") not in ("", "0", "false", "False")
# The request log is Django's (seckill_site/logs.py, JSON in production); errors go to stderr.
accesslog = os.environ.get("GUNICORN_ACCESS_LOG") or None
errorlog = "-"
# gunicorn's control socket defaults to one path per user (~/.gunicorn/gunicorn.ctl): a second
# gunicorn on the machine (tests, the bench) would take it over. Off unless a path is given.
control_socket = os.environ.get("GUNICORN_CONTROL_SOCKET", "")
control_socket_disable = not control_socket


# Without a shared directory each worker would count alone and a scrape would see whichever
# worker answered it. Set here, before the workers fork and import prometheus_client, so a
# gunicorn started without it still sums its workers: a directory of this master's own,
# removed when it exits.
_own_metrics_dir = None
if not os.environ.get("PROMETHEUS_MULTIPROC_DIR"):
    _own_metrics_dir = os.path.join(tempfile.gettempdir(), f"seckill-prometheus-{os.getpid()}")
    os.environ["PROMETHEUS_MULTIPROC_DIR"] = _own_metrics_dir
    os.makedirs(_own_metrics_dir, exist_ok=True)  # --check-config loads the app without on_starting


def on_starting(server) -> None:
    """PROMETHEUS_MULTIPROC_DIR holds one file per process that ever ran: start it empty, or
    the counters of a previous run would be added to this one's."""
    directory = os.environ.get("PROMETHEUS_MULTIPROC_DIR")
    if directory and os.environ.get("PROMETHEUS_MULTIPROC_DIR_KEEP") != "1":
        shutil.rmtree(directory, ignore_errors=True)
        os.makedirs(directory, exist_ok=True)


def child_exit(server, worker) -> None:
    """A worker that exited leaves its counters (still summed) but not its live gauges."""
    if os.environ.get("PROMETHEUS_MULTIPROC_DIR"):
        from prometheus_client import multiprocess

        multiprocess.mark_process_dead(worker.pid)


def on_exit(server) -> None:
    if _own_metrics_dir:
        shutil.rmtree(_own_metrics_dir, ignore_errors=True)
