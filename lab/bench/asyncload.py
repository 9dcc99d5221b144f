"""Fallback load generator when wrk is missing, and the open-loop one: asyncio, keep-alive
HTTP/1.1, one process.

    python -m lab.bench.asyncload BASE_URL REQUESTS_FILE once|loop|rate RESULT_JSON CONNECTIONS SECONDS [RATE]

Same request file and result format as lab/bench/wrk/replay.lua. Slower per request than wrk
(it is Python), so its CPU share in the report matters more.

`rate` is the open loop wrk (closed-loop: a connection sends when its last answer came) cannot
do: request i is due at start + i / RATE, whatever the answers take, and its latency runs from
that due time, not from when a connection was free to send it. A slow answer then shows in
every request queued behind it, as it would for shoppers who do not wait for one another
(no coordinated omission). Each answer is also timed by its request's kind, and how late the
generator sent past the due time is kept (no connection free, or the generator itself behind).
"""

from __future__ import annotations

import asyncio
import json
import re
import sys
import time
from collections import Counter
from urllib.parse import urlsplit

# The envelope's code, and the order id of a result answer (pages: `"data": 12}`, API:
# `"orderId":12`); Django's JSON has a space after the colon, DRF's compact JSON has none.
CODE = re.compile(rb'^\{"code": ?(-?\d+)')
DATA = re.compile(rb'(?:"data": ?(-?\d+)\}$|"orderId": ?(-?\d+))')


def _build(line: str, host: str, number: int) -> tuple[str, bytes]:
    """(kind, the request's bytes) of one line of the request file (lab.bench.load.Request)."""
    method, path, session, csrf, body, token, cookies, kind = line.rstrip("\n").split("\t", 7)
    request_id = f"bench-{number}-{kind}" if kind else f"bench-{number}"
    headers = [f"{method} {path} HTTP/1.1", f"Host: {host}", "Accept: application/json", f"X-Request-ID: {request_id}"]
    jar = [f"sessionid={session}; csrftoken={csrf}"] if session else []
    if cookies:
        jar.append(cookies)
    if jar:
        headers.append(f"Cookie: {'; '.join(jar)}")
    if session:
        headers.append(f"X-CSRFToken: {csrf}")
    if token:
        headers += [f"Authorization: Token {token}"]
    if body:
        headers += ["Content-Type: application/x-www-form-urlencoded", f"Content-Length: {len(body)}"]
    elif method == "POST":
        headers += ["Content-Length: 0"]
    return kind, ("\r\n".join(headers) + "\r\n\r\n" + body).encode()


async def _read_response(reader: asyncio.StreamReader) -> tuple[int, bytes, str]:
    """(status, body, the X-Cache header or "none"). The body by Content-Length or, as an edge
    sends what it streams from the backend, in chunks."""
    head = await reader.readuntil(b"\r\n\r\n")
    lines = head.split(b"\r\n")
    status = int(lines[0].split()[1])
    length = 0
    chunked = False
    cache = "none"
    for line in lines[1:]:
        name, _, value = line.partition(b":")
        name = name.strip().lower()
        if name == b"content-length":
            length = int(value)
        elif name == b"transfer-encoding":
            chunked = b"chunked" in value.lower()
        elif name == b"x-cache":
            cache = value.strip().decode(errors="replace")
    if not chunked:
        return status, (await reader.readexactly(length) if length else b""), cache
    body = b""
    while True:
        size = int((await reader.readuntil(b"\r\n")).split(b";")[0], 16)
        if size == 0:
            await _trailers(reader)
            return status, body, cache
        body += (await reader.readexactly(size + 2))[:-2]


async def _trailers(reader: asyncio.StreamReader) -> None:
    """The end of a chunked body: trailer lines, if any, up to an empty line."""
    while await reader.readuntil(b"\r\n") != b"\r\n":
        pass


async def main(
    base_url: str, requests_file: str, mode: str, out: str, connections: int, seconds: float, rate: float = 0.0
) -> None:
    url = urlsplit(base_url)
    requests = [_build(line, url.netloc, number) for number, line in enumerate(open(requests_file), 1)]
    latencies: list[float] = []
    statuses: Counter[int] = Counter()
    codes: Counter[str] = Counter()
    by_code: dict[str, list[int]] = {}  # `once` and `rate` modes: each answer's latency (µs) by its code
    by_kind: dict[str, list[int]] = {}  # `rate` mode: the same by the request's kind
    x_cache: Counter[str] = Counter()  # "kind X-Cache" -> answers
    kind_statuses: Counter[str] = Counter()  # "kind status" -> answers
    send_lag: list[int] = []  # `rate` mode: µs between a request's due time and its sending
    data = {"positive": 0, "zero": 0, "negative": 0}
    errors = Counter({"connect": 0, "read": 0, "write": 0, "timeout": 0})
    next_index = 0
    first_sent = last_received = 0.0
    started = time.monotonic()
    deadline = started + seconds

    async def connection() -> None:
        nonlocal next_index, first_sent, last_received
        reader = writer = None
        # The open loop ends by its schedule: every request due before the deadline is sent.
        while (mode == "rate" or time.monotonic() < deadline) and (mode != "once" or next_index < len(requests)):
            kind, payload = requests[next_index % len(requests)]
            due = started + next_index / rate if mode == "rate" else 0.0
            if mode == "rate" and due >= deadline:
                break  # the schedule's last request is taken: `seconds` x `rate` in all
            next_index += 1
            if due > time.monotonic():
                await asyncio.sleep(due - time.monotonic())
            try:
                if writer is None:
                    reader, writer = await asyncio.open_connection(url.hostname, url.port)
                sent = time.monotonic()
                first_sent = first_sent or sent
                writer.write(payload)
                status, body, cache = await asyncio.wait_for(_read_response(reader), 30)
            except (TimeoutError, OSError, asyncio.IncompleteReadError) as error:
                errors["timeout" if isinstance(error, asyncio.TimeoutError) else "read"] += 1
                writer = None
                continue
            last_received = time.monotonic()
            # Open loop: from when the request was due, so time spent waiting for a free
            # connection behind slow answers counts too.
            took = last_received - (due if mode == "rate" else sent)
            latencies.append(took)
            statuses[status] += 1
            code = CODE.match(body)
            answer = code.group(1).decode() if code else "none"
            codes[answer] += 1
            x_cache[f"{kind} {cache}"] += 1
            kind_statuses[f"{kind} {status}"] += 1
            if mode in ("once", "rate"):
                by_code.setdefault(answer, []).append(int(took * 1e6))
            if mode == "rate":
                by_kind.setdefault(kind, []).append(int(took * 1e6))
                send_lag.append(int(max(0.0, sent - due) * 1e6))
            value = DATA.search(body)
            if value:
                number = int(value.group(1) or value.group(2))
                data["positive" if number > 0 else "zero" if number == 0 else "negative"] += 1
        if writer is not None:
            writer.close()

    await asyncio.gather(*(connection() for _ in range(connections)))
    elapsed = time.monotonic() - started
    latencies.sort()

    def percentile(p: float) -> int:
        if not latencies:
            return 0
        return int(latencies[min(len(latencies) - 1, int(len(latencies) * p / 100))] * 1e6)

    result = {
        "duration_us": int(elapsed * 1e6),
        "requests": len(latencies),
        "latency_us": {
            "min": percentile(0),
            "mean": sum(latencies) / len(latencies) * 1e6 if latencies else 0,
            "max": int(latencies[-1] * 1e6) if latencies else 0,
            "percentiles": {str(p): percentile(p) for p in (50, 90, 95, 99, 99.9)},
        },
        "errors": dict(errors, status=sum(v for k, v in statuses.items() if k > 399)),
        "threads": [
            {
                "sent": next_index,
                "received": len(latencies),
                "planned": len(requests),
                "first_sent_us": int(first_sent * 1e6),
                "last_received_us": int(last_received * 1e6),
                "statuses": dict(statuses),
                "codes": dict(codes),
                "data": data,
                "latency_us_by_code": by_code,
                "latency_us_by_kind": by_kind,
                "x_cache": dict(x_cache),
                "kind_statuses": dict(kind_statuses),
            }
        ],
        "send_lag_us": send_lag,
    }
    with open(out, "w") as file:
        json.dump(result, file)


if __name__ == "__main__":
    base, file, run_mode, result_path, count, duration = sys.argv[1:7]
    per_second = float(sys.argv[7]) if len(sys.argv) > 7 else 0.0
    asyncio.run(main(base, file, run_mode, result_path, int(count), float(duration), per_second))
