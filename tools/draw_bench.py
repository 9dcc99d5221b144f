"""Measure a draw sale's Redis side: entries a second (enter.lua) and the draw's duration and
memory, at N entrants (issue 23). Redis only, no web server: the figures are the shard's.

    python -m tools.draw_bench --entrants 10000 100000 1000000 --units 50

Uses REDIS_URL (a database of its own: every key it writes is under the prefix
"drawbench:" and deleted at the end). Entries are sent pipelined, `--pipeline` per round trip,
from one connection: the rate is what one Redis core does with enter.lua, not what a web fleet
sends. The draw is timed in its parts: reading the entrants (SSCAN pages), ranking them
(SHA-256 each, in Python), and applying the winners (draw_apply.lua, 500 per call), with the
longest single Redis call, which is how long the draw holds the shard at a time.
"""

import argparse
import os
import time
from concurrent.futures import ThreadPoolExecutor

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "seckill_site.settings.test")
os.environ["REDIS_KEY_PREFIX"] = "drawbench:"  # before the settings read it


def main() -> None:
    import django

    django.setup()
    from seckill.services.draw import reservation_id, winners_of
    from seckill_site import sale_state
    from seckill_site.redis import client, is_cluster, script
    from seckill_site.sale_state import keys

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--entrants", type=int, nargs="+", default=[10_000, 100_000])
    parser.add_argument("--units", type=int, default=50)
    parser.add_argument("--pipeline", type=int, default=1000)
    parser.add_argument("--threads", type=int, default=8, help="on a cluster: calls in flight at once")
    options = parser.parse_args()
    redis = client()
    enter = script("enter")
    for sale_id, n in enumerate(options.entrants, start=900_001):
        for key in redis.scan_iter(match=keys.pattern(sale_id), count=1000):
            redis.delete(key)
        now = time.time()
        sale_state.sale_open(sale_id=sale_id, stock=options.units, start=now - 1, end=now + 3600, draw=now + 3600)
        for at in range(0, n, 10_000):  # one-time paths, as the captcha step would leave them
            pipe = redis.pipeline(transaction=False)
            for user_id in range(at + 1, min(n, at + 10_000) + 1):
                pipe.set(keys.path(sale_id, user_id), "p", ex=600)
            pipe.execute()
        before = _evalsha(redis)
        started = time.perf_counter()

        def enter_args(user_id: int, sale_id: int = sale_id) -> dict:
            return {
                "keys": [
                    keys.stock(sale_id),
                    keys.window(sale_id),
                    keys.entrants(sale_id),
                    keys.buyers(sale_id),
                    keys.result(sale_id, user_id),
                    keys.path(sale_id, user_id),
                    keys.gate_rate(sale_id, user_id),
                    keys.entries(sale_id),
                ],
                "args": [user_id, keys.RESULT_TTL, "p", keys.GATE_RATE_COUNT, keys.GATE_RATE_SECONDS],
            }

        if is_cluster():  # redis-py's cluster pipeline refuses scripts: one call each, from threads
            with ThreadPoolExecutor(options.threads) as pool:
                answers = list(pool.map(lambda u: enter(**enter_args(u)), range(1, n + 1), chunksize=1000))
            assert all(answer[0] == 1 for answer in answers), answers[:3]
        for at in range(0, n if not is_cluster() else 0, options.pipeline):
            pipe = redis.pipeline(transaction=False)
            for user_id in range(at + 1, min(n, at + options.pipeline) + 1):
                enter(**enter_args(user_id), client=pipe)
            answers = pipe.execute()
            assert all(answer[0] == 1 for answer in answers), answers[:3]
        entering = time.perf_counter() - started
        after = _evalsha(redis)
        # Redis's own time per script call (INFO commandstats; other clients' EVALSHA calls on a
        # shared server count too): what one core could take if clients sent faster.
        server_us = (after[1] - before[1]) / max(1, after[0] - before[0])
        memory = redis.memory_usage(keys.entrants(sale_id)) or 0
        # Each entrant's answer key ("entered"), sampled: the other half of an entry's memory.
        answers = (redis.memory_usage(keys.result(sale_id, 1)) or 0) * n
        # The window closes: the draw.
        sale_state.window_set(sale_id=sale_id, start=now - 1, end=now + 3600, draw=time.time())
        started = time.perf_counter()
        entrants = sale_state.entrants(sale_id)
        reading = time.perf_counter() - started
        # The longest single call of that read (one SSCAN page, as sale_state.entrants asks for):
        # how long the draw holds the shard at a time, round trip included.
        cursor, longest = 0, 0.0
        scans_before = _command(redis, "sscan")
        while True:
            page_started = time.perf_counter()
            cursor, _page = redis.sscan(keys.entrants(sale_id), cursor, count=sale_state.ENTRANTS_PAGE)
            longest = max(longest, time.perf_counter() - page_started)
            if cursor == 0:
                break
        scans_after = _command(redis, "sscan")
        page_us = (scans_after[1] - scans_before[1]) / max(1, scans_after[0] - scans_before[0])
        started = time.perf_counter()
        winners = winners_of("bench-seed", entrants, min(options.units, len(entrants)))
        ranking = time.perf_counter() - started
        started = time.perf_counter()
        applied = sale_state.draw_apply(
            sale_id=sale_id, winners=[(u, reservation_id(sale_id, u)) for u in winners], flush_mark_ms=5000
        )
        applying = time.perf_counter() - started
        assert applied.applied == len(winners) and len(entrants) == n
        print(
            f"entrants {n:>9,}: entries {n / entering:>9,.0f}/s ({entering:.2f} s, "
            + (f"{options.threads} threads; " if is_cluster() else f"pipeline {options.pipeline}; ")
            + (f"Redis {server_us:.1f} us a call = {1e6 / server_us:,.0f}/s a core); " if server_us else "); ")
            + f"entrant set {memory / 2**20:.1f} MiB + answers ~{answers / 2**20:.0f} MiB; "
            f"draw: read {reading * 1000:.0f} ms (a page: Redis {page_us:.0f} us on average, "
            f"longest round trip {longest * 1000:.1f} ms), "
            f"rank {ranking * 1000:.0f} ms, apply {applying * 1000:.1f} ms ({applied.applied} winners)"
        )
        for key in redis.scan_iter(match=keys.pattern(sale_id), count=1000):
            redis.delete(key)


def _evalsha(redis) -> tuple[int, int]:
    return _command(redis, "evalsha")


def _command(redis, name: str) -> tuple[int, int]:
    """(calls, microseconds) of one command so far, summed over the primaries of a cluster."""
    stats = redis.info("commandstats")
    nodes = (
        stats.values()
        if stats and all(isinstance(v, dict) and "cmdstat_ping" in v for v in stats.values())
        else [stats]
    )
    calls = sum(int(node.get(f"cmdstat_{name}", {}).get("calls", 0)) for node in nodes)
    usec = sum(int(node.get(f"cmdstat_{name}", {}).get("usec", 0)) for node in nodes)
    return calls, usec


if __name__ == "__main__":
    main()
