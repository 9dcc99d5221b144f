"""One Redis primary's ceiling for the gate: how many reserve.lua calls per second it runs.

    python -m lab.cluster.reserve_rate [--calls 200000] [--connections 4] [--depth 200]

Every key of one sale shares its hash tag, so one sale lives on one shard: that shard's
primary runs every reservation of the sale, and its rate is the sale's ceiling however many
web nodes there are. This measures it on a real cluster node (a primary with its replica
attached, as in `make cluster-test`): a sale with more stock than calls, a distinct user and
a valid one-time path per call, then EVALSHA of the shop's own reserve.lua over a few
connections, pipelined. The commands are encoded before the clock starts and the client only
writes and reads bytes, so the figure is the server's, not Python's.
"""

from __future__ import annotations

import argparse
import socket
import sys
import threading
import time
from pathlib import Path

from tools import redis_cluster

ROOT = Path(__file__).resolve().parent.parent.parent
LUA = ROOT / "sales" / "sale_state" / "lua" / "reserve.lua"
RUN = ROOT / ".run" / "cluster-reserve-rate"
HOSTS = [f"127.0.0.{i}" for i in range(21, 27)]
SALE = 1  # the keys below follow sales/sale_state/keys.py (REDIS_KEY_PREFIX empty); ARGV as in
# seckill.services.reserve: user id, request id, result TTL, the path sent


def resp(*args: str | bytes | int) -> bytes:
    out = [b"*%d\r\n" % len(args)]
    for arg in args:
        data = arg if isinstance(arg, bytes) else str(arg).encode()
        out.append(b"$%d\r\n%s\r\n" % (len(data), data))
    return b"".join(out)


def read_replies(sock: socket.socket, count: int) -> dict[str, int]:
    """Read `count` RESP integer or error replies; tally them by value class."""
    tally = {"left>=0": 0, "refused": 0, "error": 0}
    buffer = b""
    seen = 0
    while seen < count:
        chunk = sock.recv(1 << 20)
        if not chunk:
            raise ConnectionError("Redis closed the connection")
        buffer += chunk
        lines = buffer.split(b"\r\n")
        buffer = lines.pop()
        for line in lines:
            if line.startswith(b":"):
                tally["left>=0" if int(line[1:]) >= 0 else "refused"] += 1
            else:
                tally["error"] += 1
            seen += 1
    return tally


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--calls", type=int, default=200_000)
    parser.add_argument("--connections", type=int, default=4)
    parser.add_argument("--depth", type=int, default=200, help="calls in flight per connection")
    args = parser.parse_args(argv)

    import redis

    nodes = redis_cluster.cluster_up(RUN, hosts=HOSTS, replicas=1)
    try:
        cluster = redis.RedisCluster(host=nodes[0].host, port=nodes[0].port)
        stock, buyers, reservations, window = (f"sk:{{{SALE}}}:{name}" for name in
                                               ("stock", "buyers", "reservations", "window"))  # fmt: skip
        primary = cluster.get_node_from_key(stock)
        server = redis.Redis(primary.host, primary.port)
        server.flushall()
        server.set(stock, args.calls * 2)
        now = time.time()
        server.hset(window, mapping={"start": now - 60, "end": now + 3600})
        sha = server.script_load(LUA.read_text())
        user_base = 10_000_000
        with server.pipeline(transaction=False) as pipe:
            for i in range(args.calls):
                pipe.set(f"sk:{{{SALE}}}:path:{user_base + i}", "p", ex=600)
                if i % 10_000 == 9_999:
                    pipe.execute()
            pipe.execute()
        per_connection = [list(range(c, args.calls, args.connections)) for c in range(args.connections)]
        payloads = []
        for users in per_connection:
            batches = []
            for start in range(0, len(users), args.depth):
                batches.append(b"".join(
                    resp("EVALSHA", sha, 6, stock, buyers, reservations, f"sk:{{{SALE}}}:result:{user_base + i}",
                         f"sk:{{{SALE}}}:path:{user_base + i}", window,
                         user_base + i, f"r{i}", 86400, "p")
                    for i in users[start : start + args.depth]))  # fmt: skip
            payloads.append((batches, [min(args.depth, len(users) - s) for s in range(0, len(users), args.depth)]))
        results: list[dict[str, int]] = []
        cpu_before = server.info("cpu")["used_cpu_user"] + server.info("cpu")["used_cpu_sys"]

        def drive(batches: list[bytes], sizes: list[int]) -> None:
            tally = {"left>=0": 0, "refused": 0, "error": 0}
            with socket.create_connection((primary.host, primary.port)) as sock:
                for batch, size in zip(batches, sizes, strict=True):
                    sock.sendall(batch)
                    for key, value in read_replies(sock, size).items():
                        tally[key] += value
            results.append(tally)

        threads = [threading.Thread(target=drive, args=payload) for payload in payloads]
        started = time.perf_counter()
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        seconds = time.perf_counter() - started
        cpu = server.info("cpu")["used_cpu_user"] + server.info("cpu")["used_cpu_sys"] - cpu_before
        total = {key: sum(r[key] for r in results) for key in results[0]}
        left = int(server.get(stock))
        version = server.info("server")["redis_version"]
        print(f"Redis {version} primary {primary.host}:{primary.port} (with a replica), reserve.lua by EVALSHA, "
              f"{args.calls} distinct users, {args.connections} connections x {args.depth} pipelined")  # fmt: skip
        print(f"  {args.calls / seconds:,.0f} calls/s over {seconds:.2f}s; server CPU {cpu:.2f}s "
              f"({cpu / args.calls * 1e6:.1f} us per call); answers {total}; "
              f"stock {args.calls * 2} -> {left}")  # fmt: skip
        return 0 if total["left>=0"] == args.calls else 1
    finally:
        redis_cluster.cluster_down(RUN)


if __name__ == "__main__":
    sys.exit(main())
