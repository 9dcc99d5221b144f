"""django-ratelimit on the shop's clock.

django-ratelimit names each counter after its time window, which it computes from the calling
process's clock (`django_ratelimit.core` calls `time.time()`). With web nodes whose clocks
disagree, each node counts in a window of its own, and a shopper who lands on several nodes
gets several limits' worth of tries: `make cluster-test` let 8 of 9 buy requests through a
5-per-5 s limit across three nodes, one of them 30 s ahead. Every limit in the shop goes
through django-ratelimit (pages, API throttles, logins), so its clock is made the shop's:
Redis's, through `seckill_site.redis.now`, which costs no round trip per call.

django-ratelimit is pinned (requirements.txt); seckill/tests/test_clock.py fails if a new
version stops reading the clock this way.
"""

import django_ratelimit.core

from seckill_site.redis import now

_UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400}


def rate_period(rate: str) -> int:
    """Seconds of a django-ratelimit rate's window ("20/m" -> 60, "5/5s" -> 5): the longest a
    refusal can last, so what a 429's Retry-After says."""
    _count, period = rate.split("/")
    return int(period[:-1] or 1) * _UNITS[period[-1]]


class ShopClock:
    """Stands in for the `time` module inside django_ratelimit.core, which only calls time()."""

    time = staticmethod(now)


def use_shop_clock() -> None:
    django_ratelimit.core.time = ShopClock
