"""Drive HTTP load from a separate process: wrk with a Lua replay script, else an asyncio client.

Why wrk: it is C on epoll, so on a two-core machine it takes a small slice of one core
where a Python generator (locust, an async client) would eat the CPU the server needs and
measure itself. Its Lua hooks let every request carry a different shopper's session, CSRF
pair and one-time path, and its HdrHistogram gives exact tail latencies. Each run's CPU
time is read from the kernel (wait4 rusage), so the report shows how much the generator took.

Both generators read the same request file (one line per request, see lab/bench/wrk/replay.lua)
and return the same LoadResult.
"""

from __future__ import annotations

import json
import math
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections import Counter
from dataclasses import asdict, dataclass, field
from pathlib import Path

REPLAY_LUA = Path(__file__).parent / "wrk" / "replay.lua"


@dataclass(frozen=True)
class Request:
    """One request of a replay file: a browser's (session cookie and CSRF pair) or an API
    client's (`Authorization: Token`). `cookies` are more `name=value` pairs for the Cookie
    header (a result ticket); `kind` names what the request is in a mix (a word of
    [A-Za-z0-9_]), carried in its X-Request-ID so that the generators count the edge's X-Cache
    and the bench counts Django's request lines by kind."""

    method: str
    path: str
    session: str = ""
    csrf: str = ""
    body: str = ""
    token: str = ""
    cookies: str = ""
    kind: str = ""

    def line(self) -> str:
        fields = (self.method, self.path, self.session, self.csrf, self.body, self.token, self.cookies, self.kind)
        return "\t".join(fields)


@dataclass
class LoadResult:
    scenario: str
    generator: str
    connections: int
    requests: int
    seconds: float
    latency_ms: dict[str, float]  # p50, p95, p99, max, mean
    statuses: dict[str, int]
    codes: dict[str, int]  # the JSON envelope's `code`, "none" for HTML
    data: dict[str, int] = field(default_factory=dict)  # sign of an integer `data`: positive/zero/negative
    socket_errors: dict[str, int] = field(default_factory=dict)
    planned: int = 0  # requests in the file (`once` mode sends each exactly once)
    generator_cpu_seconds: float = 0.0
    generator_wall_seconds: float = 0.0  # the generator process's lifetime
    started_at: float = 0.0  # wall clock (time.time) at start / end
    ended_at: float = 0.0
    # `once` and `rate` modes: p50/p99/max and count of each answer kind (the envelope's `code`), in ms
    latency_by_code_ms: dict[str, dict[str, float]] = field(default_factory=dict)
    # `rate` mode: the same per request kind (Request.kind), each from its intended send time
    latency_by_kind_ms: dict[str, dict[str, float]] = field(default_factory=dict)
    # request kind -> the edge's X-Cache answer (HIT, MISS, PASS; "none" without an edge) -> count
    edge_by_kind: dict[str, dict[str, int]] = field(default_factory=dict)
    # request kind -> HTTP status -> count (the mixes' kinds: a kind all 404s asks what no page asks)
    statuses_by_kind: dict[str, dict[str, int]] = field(default_factory=dict)
    rate: float | None = None  # `rate` mode: requests per second scheduled
    # `rate` mode: p50/p99 ms between a request's due time and its sending (waiting for a free
    # connection behind slow answers, or the generator itself behind)
    send_lag_ms: dict[str, float] = field(default_factory=dict)

    @property
    def rps(self) -> float:
        return self.requests / self.seconds if self.seconds else 0.0

    @property
    def generator_cpu_percent(self) -> float:
        """Of one core, over the generator process's lifetime."""
        wall = self.generator_wall_seconds or self.seconds
        return 100 * self.generator_cpu_seconds / wall if wall else 0.0

    def as_dict(self) -> dict:
        data = asdict(self)
        data.update(rps=round(self.rps, 1), generator_cpu_percent=round(self.generator_cpu_percent, 1))
        return data


def write_requests(requests: list[Request], directory: Path, name: str) -> Path:
    path = directory / f"{name}.requests"
    path.write_text("".join(request.line() + "\n" for request in requests))
    return path


def wrk_path() -> str | None:
    return shutil.which("wrk")


def _run_measured(command: list[str], timeout: float, finished=None) -> tuple[int, float, float, str]:
    """Run a generator process; (exit status, wall seconds, its CPU seconds, stderr).
    Once `finished()` is true the process is told to wrap up (SIGINT: wrk prints and exits)."""
    started = time.monotonic()
    with tempfile.TemporaryFile() as errors:
        process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=errors)
        deadline = started + timeout
        interrupted = False
        while True:
            pid, status, usage = os.wait4(process.pid, os.WNOHANG)
            if pid:
                break
            if not interrupted and finished is not None and finished():
                process.send_signal(signal.SIGINT)
                interrupted = True
            if time.monotonic() > deadline:
                process.kill()
                pid, status, usage = os.wait4(process.pid, 0)
                break
            time.sleep(0.005)
        process.returncode = os.waitstatus_to_exitcode(status)  # reaped here; keep Popen quiet
        errors.seek(0)
        return (
            process.returncode,
            time.monotonic() - started,
            usage.ru_utime + usage.ru_stime,
            errors.read().decode(errors="replace"),
        )


def run(
    *,
    scenario: str,
    base_url: str,
    requests_file: Path,
    mode: str,
    connections: int,
    duration: float,
    generator: str,
    threads: int = 1,
    rate: float | None = None,
) -> LoadResult:
    """Replay `requests_file` against base_url: `once` (each line once, bounded by `duration`
    as a safety limit), `loop` (for `duration` seconds, each connection sending its next request
    when the last is answered) or `rate` (open loop: `rate` requests a second for `duration`
    seconds whatever the answers take, each timed from when it was due; the asyncio generator
    only, as Debian's wrk is closed-loop)."""
    if mode == "rate" and (generator != "async" or not rate):
        raise ValueError("`rate` mode needs the async generator and a rate")
    planned = sum(1 for _ in requests_file.open())
    connections = max(1, min(connections, planned)) if mode == "once" else connections
    with tempfile.TemporaryDirectory(prefix="seckill-bench-") as tmp:
        out = Path(tmp) / "result.json"
        if generator == "wrk":
            threads = max(1, min(threads, connections))
            command = [wrk_path() or "wrk", "-t", str(threads), "-c", str(connections), "-d", f"{int(duration)}s",
                       "--timeout", "30s", "-s", str(REPLAY_LUA), base_url, "--",
                       str(requests_file), mode, str(out), str(threads)]  # fmt: skip
        else:
            command = [sys.executable, "-m", "lab.bench.asyncload", base_url, str(requests_file), mode, str(out),
                       str(connections), str(duration), str(rate or 0)]  # fmt: skip
        finished = None
        if generator == "wrk" and mode == "once":
            done_files = [Path(f"{out}.done.{i}") for i in range(threads)]
            finished = lambda: all(file.exists() for file in done_files)  # noqa: E731
        started_at = time.time()
        status, wall, cpu, stderr = _run_measured(command, timeout=duration + 60, finished=finished)
        if status != 0 or not out.exists():
            raise RuntimeError(f"{generator} failed on {scenario} (exit {status}): {stderr.strip()[-2000:]}")
        raw = json.loads(out.read_text())
    statuses: Counter[str] = Counter()
    codes: Counter[str] = Counter()
    data: Counter[str] = Counter()
    for thread in raw["threads"]:
        statuses.update({str(k): v for k, v in thread["statuses"].items()})
        codes.update({str(k): v for k, v in thread["codes"].items()})
        data.update(thread["data"])
    by_code: dict[str, list[int]] = {}
    by_kind: dict[str, list[int]] = {}
    edge: dict[str, Counter[str]] = {}
    kind_statuses: dict[str, Counter[str]] = {}
    for thread in raw["threads"]:
        for code, values in thread.get("latency_us_by_code", {}).items():
            by_code.setdefault(str(code), []).extend(values)
        for kind, values in thread.get("latency_us_by_kind", {}).items():
            by_kind.setdefault(kind, []).extend(values)
        # "kind answer" -> count: a flat table, as wrk's thread:get() copies one level
        for pair, count in thread.get("x_cache", {}).items():
            kind, _sep, answer = pair.partition(" ")
            if kind:  # requests of no kind (every scenario but the mixes) are not told apart
                edge.setdefault(kind, Counter())[answer or "none"] += count
        for pair, count in thread.get("kind_statuses", {}).items():
            kind, _sep, status = pair.partition(" ")
            if kind:
                kind_statuses.setdefault(kind, Counter())[status] += count
    lag = raw.get("send_lag_us")
    latency = raw["latency_us"]
    percentiles = latency["percentiles"]
    # From the first request sent to the last answer received (wrk's own duration includes
    # its start-up and, in `once` mode, the wait for the SIGINT).
    active = [thread for thread in raw["threads"] if thread["received"]]
    seconds = (
        (max(t["last_received_us"] for t in active) - min(t["first_sent_us"] for t in active)) / 1e6
        if active
        else raw["duration_us"] / 1e6
    )
    return LoadResult(
        scenario=scenario,
        generator=generator,
        connections=connections,
        requests=raw["requests"],
        seconds=seconds,
        latency_ms={
            "p50": percentiles["50"] / 1000,
            "p95": percentiles["95"] / 1000,
            "p99": percentiles["99"] / 1000,
            "max": latency["max"] / 1000,
            "mean": latency["mean"] / 1000,
        },
        statuses=dict(statuses),
        codes=dict(codes),
        data={k: v for k, v in data.items() if v},
        socket_errors={k: v for k, v in raw["errors"].items() if v and k != "status"},
        planned=planned,
        generator_cpu_seconds=cpu,
        generator_wall_seconds=wall,
        started_at=started_at,
        ended_at=started_at + wall,
        latency_by_code_ms={code: latency_summary(values) for code, values in sorted(by_code.items())},
        latency_by_kind_ms={kind: latency_summary(values) for kind, values in sorted(by_kind.items())},
        edge_by_kind={kind: dict(counts) for kind, counts in sorted(edge.items())},
        statuses_by_kind={kind: dict(counts) for kind, counts in sorted(kind_statuses.items())},
        rate=rate if mode == "rate" else None,
        send_lag_ms={"p50": latency_summary(lag)["p50"], "p99": latency_summary(lag)["p99"]} if lag else {},
    )


def latency_summary(microseconds: list[int]) -> dict[str, float]:
    """p50, p99, max (ms) and the count of one answer kind's latencies (nearest rank)."""
    ordered = sorted(microseconds)

    def rank(p: float) -> float:
        return ordered[max(0, math.ceil(len(ordered) * p / 100) - 1)] / 1000

    return {"count": len(ordered), "p50": rank(50), "p99": rank(99), "max": ordered[-1] / 1000}
