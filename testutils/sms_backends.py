"""Text-message backends for tests: one that counts every call (a racing sender would call it
twice for one key, which the provider's deduplication would hide), one that blocks in a Celery
worker for the test to kill it mid-send; and racing sweeps in threads."""

import os
import threading
import time
from pathlib import Path

from django.db import connection

from users.sms import FileSmsBackend, LocmemSmsBackend

# Every (key, mobile) CountingSmsBackend was called with, repeats included.
calls: list[tuple[str | None, str]] = []
_calls_lock = threading.Lock()


class CountingSmsBackend(LocmemSmsBackend):
    """Locmem, slowed down so that racing senders overlap, recording every call."""

    def send(self, *, mobile: str, text: str, key: str | None = None) -> None:
        with _calls_lock:
            calls.append((key, mobile))
        time.sleep(0.05)
        super().send(mobile=mobile, text=text, key=key)


class BlockingFileSmsBackend(FileSmsBackend):
    """In a worker process: the provider takes the message first when the file at
    $SMS_BLOCK_MODE reads "after" (else not), then this process writes its pid to
    $SMS_BLOCK_PIDFILE and sleeps, for the test to SIGKILL it mid-send."""

    def send(self, *, mobile: str, text: str, key: str | None = None) -> None:
        if Path(os.environ["SMS_BLOCK_MODE"]).read_text().strip() == "after":
            super().send(mobile=mobile, text=text, key=key)
        Path(os.environ["SMS_BLOCK_PIDFILE"]).write_text(str(os.getpid()))
        time.sleep(600)


def sweeps_race(sweep, count: int = 2) -> None:
    """Run `sweep` in `count` threads released together, each on its own database connection,
    as a duplicated beat runs it; return once all are done."""
    start = threading.Barrier(count)

    def run() -> None:
        try:
            start.wait()
            sweep()
        finally:
            connection.close()

    threads = [threading.Thread(target=run) for _ in range(count)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
