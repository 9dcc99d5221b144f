"""What `make bench ARGS=--edge` counts per request kind, and the open loop's timing, against a
small HTTP server on loopback (no shop, no load): the edge's X-Cache by kind in both generators,
Django's request lines by kind, varnishstat's counters, and latency from each request's due time."""

from __future__ import annotations

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, HTTPServer, ThreadingHTTPServer

import pytest

from lab.bench import edge, load
from lab.bench.load import Request
from lab.bench.report import TAIL_TARGET, ratios
from testutils.bench import GENERATORS

SLOW_SECONDS = 0.02


class _Edge(BaseHTTPRequestHandler):
    """Answers as the edge would: X-Cache by path, the request id echoed; /slow after a while;
    /miss in chunks, as Varnish streams what it fetches."""

    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True

    def do_GET(self) -> None:  # noqa: N802 (http.server's name)
        if self.path.startswith("/slow"):
            time.sleep(SLOW_SECONDS)
        body = json.dumps({"code": 0, "data": 1}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("X-Request-ID", self.headers.get("X-Request-ID", "none"))
        self.send_header("X-Cache", "MISS" if self.path.startswith("/miss") else "HIT")
        if self.path.startswith("/miss"):
            self.send_header("Transfer-Encoding", "chunked")
            self.end_headers()
            half = len(body) // 2
            for chunk in (body[:half], body[half:]):
                self.wfile.write(f"{len(chunk):x}\r\n".encode() + chunk + b"\r\n")
            self.wfile.write(b"0\r\n\r\n")
            return
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        pass


def _serve(server_class):
    httpd = server_class(("127.0.0.1", 0), _Edge)
    httpd.daemon_threads = True
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    return httpd


@pytest.fixture
def server():
    httpd = _serve(ThreadingHTTPServer)
    yield f"http://127.0.0.1:{httpd.server_address[1]}"
    httpd.shutdown()
    httpd.server_close()


@pytest.mark.parametrize("generator", GENERATORS)
def test_the_edges_answers_are_counted_by_request_kind(server, tmp_path, generator):
    requests = [Request("GET", f"/hit/{n}", kind="page") if n % 4 else Request("GET", f"/miss/{n}", kind="poll")
                for n in range(40)]  # fmt: skip
    file = load.write_requests(requests, tmp_path, "kinds")
    result = load.run(scenario="kinds", base_url=server, requests_file=file, mode="once", connections=4,
                      duration=30, generator=generator, threads=2)  # fmt: skip
    assert result.edge_by_kind == {"page": {"HIT": 30}, "poll": {"MISS": 10}}
    assert result.codes == {"0": 40}  # the chunked bodies were read whole


def test_the_open_loop_times_each_request_from_when_it_was_due(tmp_path):
    # One connection to a one-at-a-time server answering in SLOW_SECONDS, asked twice as often as
    # it can answer: each request waits behind the ones before it. A closed loop would time every
    # answer at SLOW_SECONDS and send half as many; the open loop sends them all and counts the wait.
    httpd = _serve(HTTPServer)
    try:
        requests = [Request("GET", f"/slow/{n}", kind="slow") for n in range(10)]
        file = load.write_requests(requests, tmp_path, "open")
        rate = 2 / SLOW_SECONDS
        result = load.run(scenario="open", base_url=f"http://127.0.0.1:{httpd.server_address[1]}",
                          requests_file=file, mode="rate", connections=1, duration=0.5, generator="async",
                          rate=rate)  # fmt: skip
    finally:
        httpd.shutdown()
        httpd.server_close()
    scheduled = round(0.5 * rate)
    assert result.requests == scheduled and result.rate == rate
    slow = result.latency_by_kind_ms["slow"]
    assert slow["count"] == scheduled
    # The last one was due halfway through and answered after all the others: about 0.25 s late.
    assert slow["max"] > 0.2 * 1000 and slow["p50"] > 3 * SLOW_SECONDS * 1000, slow
    assert result.send_lag_ms["p99"] > 0.15 * 1000  # it waited for the one connection
    verdicts = {v["name"]: v for v in ratios([result], None)}
    assert verdicts[f"open p99 / p50, slow ({scheduled})"]["target"] == f"<= {TAIL_TARGET}"


def test_the_open_loop_is_the_async_generators_alone(tmp_path):
    file = load.write_requests([Request("GET", "/")], tmp_path, "open")
    with pytest.raises(ValueError, match="async"):
        load.run(scenario="open", base_url="http://127.0.0.1:9", requests_file=file, mode="rate", connections=1,
                 duration=1, generator="wrk", rate=10)  # fmt: skip


def test_djangos_request_lines_are_counted_by_kind_after_the_offset(tmp_path):
    def line(request_id: str, **extra) -> str:
        return json.dumps({"level": "INFO", "logger": "seckill.request", "request_id": request_id} | extra) + "\n"

    log = tmp_path / "web.log"
    log.write_text(line("bench-1-page", path="/goods/detail/1"))  # before the scenario
    offset = edge.log_size(log)
    with log.open("a") as more:
        more.write(line("bench-2-page", path="/goods/detail/1") + line("bench-9-result", path="/seckill/result"))
        more.write(line("bench-3", path="/bench/floor"))  # a request of no kind
        more.write(line("bench-4-page", message="fast path: 9 answers in 10 s"))  # the fast path's summary
        more.write("not json at all\n")
    assert edge.django_lines_by_kind(log, offset) == {"page": 1, "result": 1}
    assert edge.django_lines_by_kind(tmp_path / "missing.log", 0) == {}


def test_varnishstat_counters_are_read_and_subtracted():
    def stat(hits: int, misses: int) -> str:
        counters = {"MAIN.cache_hit": {"value": hits}, "MAIN.cache_miss": {"value": misses}, "MGT.uptime": {"value": 5}}
        return json.dumps({"version": 1, "counters": counters})

    before, after = edge.counters_read(stat(10, 2)), edge.counters_read(stat(110, 5))
    assert before == {"hits": 10, "misses": 2}
    assert edge.counters_delta(before, after) == {"hits": 100, "misses": 3}
    assert edge.counters_read("varnishstat: no such instance") == {}


def test_page_views_and_anonymous_polls_reaching_django_are_judged_against_their_targets():
    facts = {
        "opening-mix": {
            "via_edge": True,
            "by_kind": {
                "item_page": {"HIT": 990, "MISS": 10},
                "goods_details": {"HIT": 900, "MISS": 100},
                "api_detail": {"PASS": 1000},
            },
            "django_by_kind": {"item_page": 10, "goods_details": 60, "api_detail": 60},
        }
    }
    found = {v["name"]: v for v in edge.verdicts(facts)}
    assert found["opening-mix (via the edge): page views reaching Django, %"] == {
        "name": "opening-mix (via the edge): page views reaching Django, %", "value": 1.0, "target": "<= 1",
        "met": True,
    }  # fmt: skip
    polls = found["opening-mix (via the edge): anonymous polls reaching Django, %"]
    assert (polls["value"], polls["met"]) == (6.0, False)
    lines = "\n".join(edge.edge_lines(facts))
    assert "item_page      1000  HIT:990 MISS:10" in lines and "Django     10 = 1.0 %" in lines
