"""Sending text messages, through a backend chosen in settings like Django's EMAIL_BACKEND.

SMS_BACKEND names a class with `send(*, mobile, text, key=None)`:

- `users.sms.ConsoleSmsBackend` prints each message (the default: `make run` shows the
  codes in its log);
- `users.sms.FileSmsBackend` appends each message as one JSON line to SMS_FILE_PATH (demos
  and browser tests read the code there);
- `users.sms.LocmemSmsBackend` keeps them in `users.sms.outbox` (the test suite).

A real provider is one more subclass of BaseSmsBackend whose `send` calls the provider's
HTTP API (credentials from the environment, a timeout of a few seconds, raising SmsError
on failure); point SMS_BACKEND at it in the production settings.

`key` is the message's client reference, the idempotency key providers take (a notice's key,
users.notices; codes have none). A sender can die after the provider took a message and before
it recorded that, and the next try sends it again: the provider drops a key it has seen, so
the shopper gets it once. A real backend passes `key` as the provider's reference; the File
and Locmem backends drop a repeated key as a provider does. The Console backend prints every
try: it is for reading codes, not a provider.
"""

import fcntl
import json
import sys
import threading
import time

from django.conf import settings
from django.utils.module_loading import import_string
from prometheus_client import Counter

# LocmemSmsBackend's messages: {"mobile", "text", "key"} dicts, oldest first.
outbox: list[dict[str, str | None]] = []

# Every message asked for: "sent", or the limit that refused it (users.verification):
# resend_wait, requester_day, number_day, requester_hour, shop_hour (a code: a notice the hour
# refuses waits, users.notices). deploy/alerts.yml pages when the shop's hourly cap refuses any
# (SMS pumping, or a cap set too low).
SMS_MESSAGES = Counter("seckill_sms_messages_total", "Text messages asked for, by result", ["result"])


class SmsError(Exception):
    """The provider did not take the message."""


class BaseSmsBackend:
    def send(self, *, mobile: str, text: str, key: str | None = None) -> None:
        raise NotImplementedError


class ConsoleSmsBackend(BaseSmsBackend):
    def send(self, *, mobile: str, text: str, key: str | None = None) -> None:
        sys.stdout.write(f"[sms to {mobile}] {text}\n")
        sys.stdout.flush()


class FileSmsBackend(BaseSmsBackend):
    """One JSON line per message. Several processes append to the file, so a keyed message
    is looked for and appended under an exclusive lock on the file itself."""

    def send(self, *, mobile: str, text: str, key: str | None = None) -> None:
        line = json.dumps({"time": time.time(), "mobile": mobile, "text": text, "key": key}, ensure_ascii=False)
        with open(settings.SMS_FILE_PATH, "a+", encoding="utf-8") as file:
            fcntl.flock(file, fcntl.LOCK_EX)
            try:
                if key is not None:
                    file.seek(0)
                    if any(json.loads(seen).get("key") == key for seen in file if seen.strip()):
                        return
                file.write(line + "\n")
                file.flush()
            finally:
                fcntl.flock(file, fcntl.LOCK_UN)


class LocmemSmsBackend(BaseSmsBackend):
    _lock = threading.Lock()

    def send(self, *, mobile: str, text: str, key: str | None = None) -> None:
        with self._lock:
            if key is not None and any(message["key"] == key for message in outbox):
                return
            outbox.append({"mobile": mobile, "text": text, "key": key})


def sms_backend() -> BaseSmsBackend:
    return import_string(settings.SMS_BACKEND)()
