"""Alipay's clock: every time it reads or writes is "yyyy-MM-dd HH:mm:ss" in Beijing time (UTC+8),
whatever the zone of the machine or of the merchant."""

from __future__ import annotations

import re
from datetime import date, datetime, timedelta, timezone

# China has kept UTC+8 without daylight saving since 1991: a fixed offset needs no tz database.
SHANGHAI = timezone(timedelta(hours=8), "Asia/Shanghai")
FORMAT = "%Y-%m-%d %H:%M:%S"
# timeout_express: minutes, hours or days, or "1c" for the end of the day the trade was created.
TIMEOUT_EXPRESS = re.compile(r"(\d+)([mhd])|1c")
TIMEOUT_UNITS = {"m": timedelta(minutes=1), "h": timedelta(hours=1), "d": timedelta(days=1)}
TIMEOUT_LONGEST = timedelta(days=15)


def now() -> datetime:
    return datetime.now(SHANGHAI).replace(microsecond=0)


def text(moment: datetime) -> str:
    return moment.astimezone(SHANGHAI).strftime(FORMAT)


def parse(value: str) -> datetime:
    """A "yyyy-MM-dd HH:mm:ss" Beijing time; ValueError if it is not one."""
    return datetime.strptime(value, FORMAT).replace(tzinfo=SHANGHAI)


def day(value: str) -> date:
    """The Beijing date of a "yyyy-MM-dd HH:mm:ss" time."""
    return parse(value).date()


def timeout_end(express: str, start: datetime) -> datetime:
    """When a trade created at `start` with `timeout_express` (1m to 15d, or 1c) closes unpaid;
    ValueError for anything else, as Alipay refuses it."""
    match = TIMEOUT_EXPRESS.fullmatch(express)
    if match is None:
        raise ValueError(f"timeout_express {express!r} is not like 15m, 2h, 1d or 1c")
    if express == "1c":
        return datetime.combine(start.date() + timedelta(days=1), datetime.min.time(), SHANGHAI)
    length = int(match[1]) * TIMEOUT_UNITS[match[2]]
    if not timedelta(minutes=1) <= length <= TIMEOUT_LONGEST:
        raise ValueError(f"timeout_express {express!r} is outside 1m to 15d")
    return start + length
