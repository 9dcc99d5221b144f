"""`make restore-drill`: prove that the shop's PostgreSQL backups restore to a point in time.

`drill` is its story, the steps of the package's docstring (lab/restore_drill/__init__.py), each
done by lab.restore_drill.postgres (PostgreSQL, pgBackRest), lab.restore_drill.shop (the shop,
Redis) and lab.restore_drill.verdict (the check and the table). `main` reads the command line and
tears everything down on exit, Ctrl-C or SIGTERM. With --verify it is instead the process that
checks the restored database (lab.restore_drill.verdict.verify_main).
"""

from __future__ import annotations

import argparse
import contextlib
import fcntl
import json
import os
import shlex
import shutil
import signal
import subprocess
import sys
import time
from collections import Counter
from dataclasses import asdict
from pathlib import Path

from lab.restore_drill.postgres import (
    DB_NAME,
    ORIGINAL_PORT,
    PG_BIN,
    RESTORED_PORT,
    Cluster,
    Repository,
    conf_quote,
    owned_dir,
    recovery_stopped,
    target_mark,
    tree_bytes,
    version,
)
from lab.restore_drill.shop import (
    batch_buy,
    django_start,
    order_ids,
    redis_answers,
    redis_choose,
    redis_forget,
    sale_put_on,
    shop_env,
    shoppers_create,
)
from lab.restore_drill.verdict import Facts, Measures, Verdict, table, verify_main
from lab.restore_drill.workspace import LOGS, ROOT, RUN, USUAL, DrillError, log, remove
from tools.net import free_port, wait_until
from tools.reachable import UnsafeDirectory, reachable_made


class Terminated(Exception):
    """SIGTERM arrived: the drill tears down as on Ctrl-C."""


def terminated(signum: int, _frame: object) -> None:
    raise Terminated


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


def drill(options: argparse.Namespace, stack: contextlib.ExitStack) -> Measures:
    """The drill's steps (the package's docstring); `stack` stops what they start."""
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
    parser = argparse.ArgumentParser(prog="python -m lab.restore_drill", description=__doc__.splitlines()[0])
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
    try:
        reachable_made(USUAL)
    except UnsafeDirectory as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
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
        log("stopping the servers and deleting their data; logs stay in " + str(USUAL / LOGS.name))
        stack.close()
    print(table(measures))
    problems = measures.problems()
    for problem in problems:
        print(f"  VIOLATION: {problem}")
    print(f"result: {'ok' if not problems else 'FAILED'}")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
