"""The drill's PostgreSQL and pgBackRest: private clusters under RUN on loopback ports, the
pgBackRest repository beside them with its configuration rendered from deploy/pgbackrest.conf, and
the restore target marked on a cluster's clock or as a named restore point.

PostgreSQL and pgBackRest refuse root: when the drill is root, their commands (`run`) and files
belong to the postgres system user (OWNER)."""

from __future__ import annotations

import contextlib
import json
import os
import re
import shlex
import shutil
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from lab.restore_drill.workspace import LOGS, ROOT, RUN, DrillError

TEMPLATE = ROOT / "deploy" / "pgbackrest.conf"
PG_BIN = Path(os.environ.get("PG_BIN", "/usr/lib/postgresql/15/bin"))
STANZA = "seckill"  # the stanza deploy/pgbackrest.conf names
DB_NAME = "seckill"
ORIGINAL_PORT, RESTORED_PORT = 15499, 15500  # preferred; another free port when taken
OWNER = "postgres"  # the system user PostgreSQL and pgBackRest run as when the drill is root
# Seconds between the last commit kept and the target time, and between it and the first commit
# after: commit times and the target come from the same server clock, so any gap separates them.
TARGET_MARGIN = 0.3


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
            conf.write("\n# lab/restore_drill\n" + "\n".join(lines) + "\n")

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


# --- the restore target -------------------------------------------------------------------------


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
    """What `cmd` prints, stripped: a program's version ('' when it prints nothing)."""
    return subprocess.run(cmd, capture_output=True, text=True, check=False).stdout.strip()
