"""Sending text messages, through a backend chosen in settings like Django's EMAIL_BACKEND.

SMS_BACKEND names a class with `send(*, mobile, text)`:

- `users.sms.ConsoleSmsBackend` prints each message (the default: `make run` shows the
  codes in its log);
- `users.sms.FileSmsBackend` appends each message as one JSON line to SMS_FILE_PATH (demos
  and browser tests read the code there);
- `users.sms.LocmemSmsBackend` keeps them in `users.sms.outbox` (the test suite).

A real provider is one more subclass of BaseSmsBackend whose `send` calls the provider's
HTTP API (credentials from the environment, a timeout of a few seconds, raising SmsError
on failure); point SMS_BACKEND at it in the production settings.
"""

import json
import sys
import threading
import time

from django.conf import settings
from django.utils.module_loading import import_string
from prometheus_client import Counter

# LocmemSmsBackend's messages: {"mobile", "text"} dicts, oldest first.
outbox: list[dict[str, str]] = []

# Every message asked for: "sent", or the limit that refused it (users.verification):
# resend_wait, requester_day, number_day, requester_hour, shop_hour. deploy/alerts.yml pages
# when the shop's hourly cap refuses any (SMS pumping, or a cap set too low).
SMS_MESSAGES = Counter("seckill_sms_messages_total", "Text messages asked for, by result", ["result"])


class SmsError(Exception):
    """The provider did not take the message."""


class BaseSmsBackend:
    def send(self, *, mobile: str, text: str) -> None:
        raise NotImplementedError


class ConsoleSmsBackend(BaseSmsBackend):
    def send(self, *, mobile: str, text: str) -> None:
        sys.stdout.write(f"[sms to {mobile}] {text}\n")
        sys.stdout.flush()


class FileSmsBackend(BaseSmsBackend):
    _lock = threading.Lock()

    def send(self, *, mobile: str, text: str) -> None:
        line = json.dumps({"time": time.time(), "mobile": mobile, "text": text}, ensure_ascii=False)
        with self._lock, open(settings.SMS_FILE_PATH, "a", encoding="utf-8") as file:
            file.write(line + "\n")


class LocmemSmsBackend(BaseSmsBackend):
    def send(self, *, mobile: str, text: str) -> None:
        outbox.append({"mobile": mobile, "text": text})


def sms_backend() -> BaseSmsBackend:
    return import_string(settings.SMS_BACKEND)()
