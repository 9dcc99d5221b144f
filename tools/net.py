"""Ports, waits and log lines, shared by the test suite and the harness (faults, cluster, bench)."""

from __future__ import annotations

import socket
import time
from collections.abc import Callable


def free_port(host: str = "127.0.0.1", preferred: int | None = None) -> int:
    """A port free on `host`: `preferred` when it is (keeps URLs in open shells valid), else any.
    As redis does, a port with only TIME_WAIT connections left counts as free."""
    with socket.socket() as sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind((host, preferred or 0))
        except OSError:
            sock.bind((host, 0))
        return sock.getsockname()[1]


def wait_until(check: Callable[[], object], timeout: float, interval: float = 0.1) -> bool:
    """Call `check` until it returns something true (True) or `timeout` seconds pass (False).
    A check that raises counts as not yet: what we wait for is down or not up yet, by design."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            if check():
                return True
        except Exception:  # noqa: BLE001
            pass
        time.sleep(interval)
    return False


def logger(name: str) -> Callable[[str], None]:
    """A harness's log function: `[name HH:MM:SS] message` in UTC, like the servers' logs it is read
    beside (Django, once set up, moves the process's local time to the shop's zone)."""

    def log(message: str) -> None:
        print(f"[{name} {time.strftime('%H:%M:%S', time.gmtime())}] {message}", flush=True)

    return log
