"""`make run`: the whole demo in one terminal (`make dev`: the same with runserver).

Ensures PostgreSQL and Redis (see tools.services), prepares the database, then runs the web server,
a Celery worker and Celery beat with prefixed output. Ctrl-C / SIGTERM, or any of the three dying,
stops all of them and the embedded servers this run started.

The web server is granian (seckill_site/serve.py) with WhiteNoise serving static files, because
runserver's tiny listen backlog resets connections under a burst. `RELOAD=1 make run` restarts
granian's workers on code changes; `make dev` (`--dev`) runs runserver with its autoreloader.
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time

from tools.payment_services import stripe_webhook_register
from tools.services import ROOT, ServiceError, ensure_services, stop_services

PY = sys.executable
# RUN_PORT: a second demo beside another on 8000 (the URL, and the texts' links, are otherwise :8000).
HOST, PORT = "127.0.0.1", int(os.environ.get("RUN_PORT", "8000"))
SETUP = [
    [PY, "manage.py", "migrate", "--noinput"],
    [PY, "manage.py", "collectstatic", "--noinput", "-v", "0"],  # what WhiteNoise serves
    [PY, "manage.py", "seed_demo"],  # idempotent; prints the demo logins
    # Stock counters into Redis; the slow-to-fill captcha pool is left to beat.
    [PY, "manage.py", "seckill_warm", "--captchas", "0"],
]
WEB = [PY, "-m", "seckill_site.serve", "--bind", f"{HOST}:{PORT}"]
WEB_DEV = [PY, "manage.py", "runserver", f"{HOST}:{PORT}"]
CHILDREN = {
    "web": WEB,
    "worker": [PY, "-m", "celery", "-A", "celery_app", "worker", "-l", "info", "--concurrency", "2"],
    "beat": [PY, "-m", "celery", "-A", "celery_app", "beat", "-l", "info", "--schedule", ".run/celerybeat-schedule"],
}
GRACE_SECONDS = 10
BANNER = f"""
  Seckill demo is running
    shop   http://{HOST}:{PORT}/goods/goodsList
    admin  http://{HOST}:{PORT}/admin/
    demo logins: see the seed_demo output above.  Ctrl-C stops everything.
"""

signals: list[int] = []  # signals received; the handlers only record them
print_lock = threading.Lock()


def log(message: str) -> None:
    with print_lock:
        print(f"run    | {message}", flush=True)


def port_open() -> bool:
    try:
        socket.create_connection((HOST, PORT), timeout=0.5).close()
        return True
    except OSError:
        return False


def run_step(cmd: list[str]) -> int:
    """One setup command in the foreground (Ctrl-C reaches it directly)."""
    log("$ " + " ".join(cmd[1:]))
    proc = subprocess.Popen(cmd)
    while proc.poll() is None:
        if signal.SIGTERM in signals or signal.SIGHUP in signals:
            proc.terminate()  # SIGTERM is sent to us only; Ctrl-C already reached it
        time.sleep(0.2)
    return proc.returncode


try:  # looked up now, not in the forked child, where importing is unsafe
    import ctypes

    PRCTL = ctypes.CDLL(None, use_errno=True).prctl if sys.platform == "linux" else None
except (ImportError, OSError, AttributeError):
    PRCTL = None


def die_with_parent() -> None:
    """Linux: the kernel SIGTERMs this child if run.py is killed outright, so no orphan lives on."""
    if PRCTL is not None:
        PRCTL(1, int(signal.SIGTERM))  # 1 = PR_SET_PDEATHSIG


def pump(name: str, stream) -> None:
    for line in stream:
        with print_lock:
            sys.stdout.write(f"{name:<6} | {line}")
            sys.stdout.flush()


def start_children() -> dict[str, subprocess.Popen]:
    procs = {}
    for name, cmd in CHILDREN.items():
        # Own session: Ctrl-C in the terminal reaches only us, and we stop the
        # children in order (SIGTERM, grace period, SIGKILL) instead of all at once.
        procs[name] = subprocess.Popen(
            cmd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
            text=True, errors="replace", start_new_session=True, preexec_fn=die_with_parent,
        )  # fmt: skip
    # Threads only after every fork: preexec_fn is not safe while other threads run.
    for name, proc in procs.items():
        threading.Thread(target=pump, args=(name, proc.stdout), daemon=True).start()
    return procs


def stop_children(procs: dict[str, subprocess.Popen]) -> None:
    for proc in procs.values():
        if proc.poll() is None:
            proc.terminate()
    deadline = time.monotonic() + GRACE_SECONDS
    while time.monotonic() < deadline and len(signals) < 2:  # a 2nd Ctrl-C: don't wait
        if all(proc.poll() is not None for proc in procs.values()):
            break
        time.sleep(0.2)
    for name, proc in procs.items():
        if proc.poll() is None:
            log(f"{name} did not stop in time; killing it")
        try:  # the whole group, so no Celery pool process is left behind
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        proc.wait()


def supervise(procs: dict[str, subprocess.Popen]) -> int:
    """Wait for a signal (exit 0) or for any child to exit (exit 1)."""
    announced = False
    while not signals:
        for name, proc in procs.items():
            if proc.poll() is not None:
                log(f"{name} exited with code {proc.returncode}; stopping everything")
                return 1
        if not announced and port_open():
            with print_lock:
                print(BANNER, flush=True)
            announced = True
        time.sleep(0.3)
    log(f"{signal.Signals(signals[0]).name} received; stopping (press Ctrl-C again to kill)")
    return 0


def prometheus_dir() -> str:
    """One empty directory for the counters of every web and worker process of this run
    (seckill_site/metrics.py): /metrics on the web server then shows the workers' too."""
    directory = ROOT / ".run" / "prometheus"
    shutil.rmtree(directory, ignore_errors=True)
    directory.mkdir(parents=True)
    return str(directory)


def demo_env(*, dev: bool, port: int = PORT) -> dict[str, str]:
    """`make run` shows the shop as shoppers see it, its own 404 and 500 pages included (Django's
    debug page lists every URL and setting); `make dev` keeps DEBUG on. A DEBUG already set wins.

    The links in texts lead to the demo where it listens (RUN_PORT), unless SHOP_PUBLIC_URL, or
    PAYMENT_PUBLIC_URL that it defaults to, names the shop's address already: the worker that
    sends them has no request to take it from."""
    env = {"DEBUG": os.environ.get("DEBUG", "1" if dev else "0")}
    if not os.environ.get("SHOP_PUBLIC_URL") and not os.environ.get("PAYMENT_PUBLIC_URL"):
        env["SHOP_PUBLIC_URL"] = f"http://{HOST}:{port}"
    return env


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if "--dev" in argv:
        CHILDREN["web"] = WEB_DEV
    os.environ.update(demo_env(dev="--dev" in argv))
    os.chdir(ROOT)
    (ROOT / ".run").mkdir(exist_ok=True)  # beat's schedule lives there
    for signum in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(signum, lambda signum, _frame: signals.append(signum))
    try:
        env, started = ensure_services(ROOT)
    except ServiceError as exc:
        log(f"error: {exc}")
        return 1
    os.environ.update(env)
    os.environ["PYTHONUNBUFFERED"] = "1"  # children write to pipes: no block buffering
    # The wsgi module defaults to production settings; the demo is the local ones.
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "seckill_site.settings.local")
    os.environ["PROMETHEUS_MULTIPROC_DIR"] = prometheus_dir()
    os.environ["PROMETHEUS_MULTIPROC_DIR_KEEP"] = "1"  # emptied above, before the worker starts writing
    log(f"embedded servers started: {', '.join(started) or 'none (reusing / using *_URL)'}")
    try:
        for cmd in SETUP:
            code = run_step(cmd)
            if signals:
                log("interrupted")
                return 1
            if code != 0:
                log(f"`{' '.join(cmd[1:])}` failed with exit code {code}")
                return code if code > 0 else 1
        if port_open():
            log(f"error: {HOST}:{PORT} is already in use (another `make run`?)")
            return 1
        if "STRIPE_API_BASE" in env:  # our localstripe: tell it where the shop listens
            stripe_webhook_register(env["STRIPE_API_BASE"], f"http://{HOST}:{PORT}/payments/stripe/webhook")
        procs = start_children()
        try:
            return supervise(procs)
        finally:
            stop_children(procs)
            time.sleep(0.2)  # let the pump threads print the children's last lines
    finally:
        if started:
            log(f"stopping embedded {', '.join(started)}")
            try:
                stop_services(ROOT, started)
            except ServiceError as exc:
                log(f"warning: {exc}")


if __name__ == "__main__":
    sys.exit(main())
