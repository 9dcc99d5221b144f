"""django-ratelimit on the shop's clock: it names each counter after a window of the process's
clock, so nodes whose clocks disagree would each count their own window and multiply every
limit. Its clock is made Redis's (`seckill_site.redis.now`); seckill/tests/test_clock.py fails if
a new django-ratelimit stops reading the clock this way."""

import django_ratelimit.core

from seckill_site.redis import now

_UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400}


def rate_period(rate: str) -> int:
    """Seconds of a rate's window ("20/m" -> 60, "5/5s" -> 5): the longest a refusal lasts."""
    _count, period = rate.split("/")
    return int(period[:-1] or 1) * _UNITS[period[-1]]


class ShopClock:
    """Stands in for the `time` module inside django_ratelimit.core, which only calls time()."""

    time = staticmethod(now)


def use_shop_clock() -> None:
    django_ratelimit.core.time = ShopClock
