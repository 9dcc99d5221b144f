"""Fallback load generator when wrk is missing: asyncio, keep-alive HTTP/1.1, one process.

    python -m lab.bench.asyncload BASE_URL REQUESTS_FILE once|loop RESULT_JSON CONNECTIONS SECONDS

Same request file and result format as lab/bench/wrk/replay.lua. Slower per request than wrk
(it is Python), so its CPU share in the report matters more.
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


def _build(line: str, host: str) -> bytes:
    method, path, session, csrf, body, token = line.rstrip("\n").split("\t", 5)
    headers = [f"{method} {path} HTTP/1.1", f"Host: {host}", "Accept: application/json"]
    if session:
        headers += [f"Cookie: sessionid={session}; csrftoken={csrf}", f"X-CSRFToken: {csrf}"]
    if token:
        headers += [f"Authorization: Token {token}"]
    if body:
        headers += ["Content-Type: application/x-www-form-urlencoded", f"Content-Length: {len(body)}"]
    elif method == "POST":
        headers += ["Content-Length: 0"]
    return ("\r\n".join(headers) + "\r\n\r\n" + body).encode()


async def _read_response(reader: asyncio.StreamReader) -> tuple[int, bytes]:
    head = await reader.readuntil(b"\r\n\r\n")
    lines = head.split(b"\r\n")
    status = int(lines[0].split()[1])
    length = 0
    for line in lines[1:]:
        name, _, value = line.partition(b":")
        if name.strip().lower() == b"content-length":
            length = int(value)
    body = await reader.readexactly(length) if length else b""
    return status, body


async def main(base_url: str, requests_file: str, mode: str, out: str, connections: int, seconds: float) -> None:
    url = urlsplit(base_url)
    requests = [_build(line, url.netloc) for line in open(requests_file)]
    latencies: list[float] = []
    statuses: Counter[int] = Counter()
    codes: Counter[str] = Counter()
    by_code: dict[str, list[int]] = {}  # `once` mode: each answer's latency (µs) by its code
    data = {"positive": 0, "zero": 0, "negative": 0}
    errors = Counter({"connect": 0, "read": 0, "write": 0, "timeout": 0})
    next_index = 0
    first_sent = last_received = 0.0
    started = time.monotonic()
    deadline = started + seconds

    async def connection() -> None:
        nonlocal next_index, first_sent, last_received
        reader = writer = None
        while time.monotonic() < deadline and (mode == "loop" or next_index < len(requests)):
            payload = requests[next_index % len(requests)]
            next_index += 1
            try:
                if writer is None:
                    reader, writer = await asyncio.open_connection(url.hostname, url.port)
                sent = time.monotonic()
                first_sent = first_sent or sent
                writer.write(payload)
                status, body = await asyncio.wait_for(_read_response(reader), 30)
            except (TimeoutError, OSError, asyncio.IncompleteReadError) as error:
                errors["timeout" if isinstance(error, asyncio.TimeoutError) else "read"] += 1
                writer = None
                continue
            last_received = time.monotonic()
            latencies.append(last_received - sent)
            statuses[status] += 1
            code = CODE.match(body)
            kind = code.group(1).decode() if code else "none"
            codes[kind] += 1
            if mode == "once":
                by_code.setdefault(kind, []).append(int((last_received - sent) * 1e6))
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
            }
        ],
    }
    with open(out, "w") as file:
        json.dump(result, file)


if __name__ == "__main__":
    base, file, run_mode, result_path, count, duration = sys.argv[1:7]
    asyncio.run(main(base, file, run_mode, result_path, int(count), float(duration)))
