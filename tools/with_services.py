"""Run one command with PostgreSQL and Redis available, e.g. the test suite.

    python -m tools.with_services -- CMD ARGS...

Starts (or reuses) the embedded servers when DATABASE_URL / REDIS_URL are unset,
runs CMD with the resulting environment, then stops only the servers this call
started, so a test run leaves nothing behind. Exits with CMD's exit code.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys

from tools.services import ROOT, ServiceError, ensure_services, stop_services


def main(argv: list[str]) -> int:
    cmd = argv[1:]
    if cmd[:1] == ["--"]:
        cmd = cmd[1:]
    if not cmd:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    try:
        env, started = ensure_services(ROOT)
    except ServiceError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    os.environ.update(env)

    # Ctrl-C reaches CMD directly (same process group): wait for CMD to wind down rather than die
    # before the cleanup below. SIGTERM/SIGHUP (CI timeouts, closed terminals) reach only us: pass them on.
    proc = None

    def forward(signum, _frame):
        if proc is not None:
            proc.send_signal(signum)

    # A no-op handler, not SIG_IGN: exec resets handlers but passes SIG_IGN on, deafening CMD to Ctrl-C.
    signal.signal(signal.SIGINT, lambda *_: None)
    for signum in (signal.SIGTERM, signal.SIGHUP):
        signal.signal(signum, forward)
    try:
        try:
            proc = subprocess.Popen(cmd)
        except OSError as exc:
            print(f"error: cannot run {cmd[0]!r}: {exc}", file=sys.stderr)
            return 127
        returncode = proc.wait()
    finally:
        try:
            stop_services(ROOT, started)
        except ServiceError as exc:
            print(f"warning: {exc}", file=sys.stderr)
    # Like a shell: a child killed by signal N reports 128 + N.
    return returncode if returncode >= 0 else 128 - returncode


if __name__ == "__main__":
    sys.exit(main(sys.argv))
