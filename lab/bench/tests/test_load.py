"""The load generators time each answer kind apart, against a real HTTP server on loopback.

A burst's answers are of two kinds (a slow accepted buy, a fast sold-out); one latency
distribution over both says nothing about either. Here the server answers one kind after 40 ms
and the other at once: each kind's latency must be its own, not the other's nor the mix's.
"""

from __future__ import annotations

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from lab.bench import load
from lab.bench.load import Request
from testutils.bench import GENERATORS

# A slow answer's time, far above a fast one's even on a loaded machine (fast answers' p99 reached
# 26 ms on two cores at a load average near 12), so that a slow answer counted as fast shows.
SLOW_SECONDS = 0.25


class _Answers(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive, as the shop's server
    disable_nagle_algorithm = True  # headers and body go out in two writes: no delayed-ACK wait

    def do_GET(self) -> None:  # noqa: N802 (http.server's name)
        slow = self.path.startswith("/slow")
        if slow:
            time.sleep(SLOW_SECONDS)
        missing = self.path.startswith("/missing")
        body = json.dumps({"code": 500404 if missing else 0 if slow else 500500, "data": 1 if slow else -1}).encode()
        self.send_response(404 if missing else 200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        # The shop echoes a client's request id; the generators pair an answer with its request by it.
        self.send_header("X-Request-ID", self.headers.get("X-Request-ID", "none"))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def server():
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), _Answers)
    httpd.daemon_threads = True
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}"
    httpd.shutdown()
    httpd.server_close()


@pytest.mark.parametrize("generator", GENERATORS)
def test_each_answer_kind_is_timed_by_itself(server, tmp_path, generator):
    # One slow answer in five, spread over the file as a burst's accepted buys are not: any
    # pairing of an answer with the wrong request would mix the two kinds' latencies.
    requests = [Request("GET", f"/{'slow' if n % 5 == 0 else 'fast'}/{n}") for n in range(200)]
    file = load.write_requests(requests, tmp_path, "kinds")
    result = load.run(scenario="kinds", base_url=server, requests_file=file, mode="once", connections=8,
                      duration=30, generator=generator, threads=2)  # fmt: skip
    slow, fast = result.latency_by_code_ms["0"], result.latency_by_code_ms["500500"]
    assert (slow["count"], fast["count"]) == (40, 160)
    assert slow["p50"] >= SLOW_SECONDS * 1000 * 0.9, slow
    assert fast["p99"] < SLOW_SECONDS * 1000 * 0.5, fast  # no slow answer counted as a fast one


@pytest.mark.parametrize("generator", GENERATORS)
def test_each_request_kinds_statuses_are_counted_by_themselves(server, tmp_path, generator):
    # A mix's kind whose requests the shop refuses must show as that kind's, not only in the totals.
    requests = [Request("GET", f"/fast/{n}", kind="state") if n % 4 else Request("GET", f"/missing/{n}", kind="list")
                for n in range(40)]  # fmt: skip
    file = load.write_requests(requests, tmp_path, "kinds")
    result = load.run(scenario="kinds", base_url=server, requests_file=file, mode="once", connections=4,
                      duration=30, generator=generator, threads=2)  # fmt: skip
    assert result.statuses == {"200": 30, "404": 10}
    assert result.statuses_by_kind == {"list": {"404": 10}, "state": {"200": 30}}


def test_the_tail_is_judged_within_each_answer_kind_as_well():
    from lab.bench.report import TAIL_TARGET, ratios

    kinds = {
        "0": {"count": 500, "p50": 30.0, "p99": 60.0, "max": 70.0},
        "500500": {"count": 2500, "p50": 1.5, "p99": 6.0, "max": 9.0},
    }
    burst = load.LoadResult(scenario="burst", generator="wrk", connections=64, requests=3000, seconds=0.5,
                            latency_ms={"p50": 2.0, "p99": 60.0, "p95": 50.0, "max": 70.0, "mean": 10.0},
                            statuses={"200": 3000}, codes={"0": 500, "500500": 2500},
                            latency_by_code_ms=kinds)  # fmt: skip
    verdicts = {v["name"]: v for v in ratios([burst], None)}
    assert verdicts["burst p99 / p50"]["met"] is False  # the mix: a sold-out's median, a buy's tail
    assert verdicts["burst p99 / p50, accepted only (500)"] == {
        "name": "burst p99 / p50, accepted only (500)", "value": 2.0, "target": f"<= {TAIL_TARGET}", "met": True
    }  # fmt: skip
    assert verdicts["burst p99 / p50, sold out only (2500)"]["value"] == 4.0
    assert verdicts["burst p99 / p50, sold out only (2500)"]["met"] is False
