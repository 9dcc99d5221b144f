"""The purge sender (seckill_site.edge) against small real HTTP servers standing in for edges:
many calls become few PURGEs, each edge gets every key, and a caller never waits or fails,
whether the edge is down or there is none."""

import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from django.http import HttpResponse
from prometheus_client import REGISTRY

from seckill_site import edge
from tools.net import free_port


class Edge:
    """Records each PURGE's time and keys, and answers 200 as deploy/edge.vcl does."""

    def __init__(self) -> None:
        self.purges: list[tuple[float, set[str]]] = []
        recorded = self.purges

        class Handler(BaseHTTPRequestHandler):
            def do_PURGE(self):
                recorded.append((time.monotonic(), set(self.headers.get("xkey-purge", "").split())))
                self.send_response(200)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, *args):
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/"

    def keys(self) -> set[str]:
        return set().union(*(keys for _, keys in self.purges))


@pytest.fixture
def edges():
    pair = [Edge(), Edge()]
    yield pair
    for one in pair:
        one.server.shutdown()


@pytest.fixture(autouse=True)
def sender(monkeypatch):
    """A sender of the test's own: nothing waits from an earlier test, and a thread started
    here is this test's."""
    edge.edge_purge_forget()  # an earlier test's repeats would go to this test's edges
    fresh = edge._Sender()
    monkeypatch.setattr(edge, "_sender", fresh)
    yield fresh
    fresh.forget()


def test_each_purge_is_sent_once_more_a_little_later(settings, edges, monkeypatch):
    """A page the edge was fetching while the change committed lands after the first purge;
    the second one drops it."""
    monkeypatch.setattr(edge, "REPEAT_SECONDS", 0.3)
    settings.EDGE_PURGE_URLS = [edges[0].url]
    edge.edge_purge("sale-7")
    assert edge.edge_purge_flush(5)
    time.sleep(0.6)
    times = [at for at, _ in edges[0].purges]
    assert edges[0].keys() == {"sale-7"} and len(times) == 2 and times[1] - times[0] >= 0.3, times


def failed() -> float:
    return REGISTRY.get_sample_value("seckill_edge_purges_total", {"outcome": "failed"}) or 0.0


def test_many_purges_become_few_requests_to_every_edge(settings, edges):
    settings.EDGE_PURGE_URLS = [one.url for one in edges]
    keys = {f"sale-{n}" for n in range(200)} | {"sales"}

    def purge_some(start: int) -> None:
        for n in range(start, 200, 4):
            edge.edge_purge(f"sale-{n}", "sales")

    callers = [threading.Thread(target=purge_some, args=(start,)) for start in range(4)]
    for caller in callers:
        caller.start()
    for caller in callers:
        caller.join()
    assert edge.edge_purge_flush(5)
    for one in edges:
        assert one.keys() == keys
        assert 1 <= len(one.purges) <= 4, len(one.purges)


def test_an_edge_gets_at_most_one_purge_per_interval(settings, edges):
    settings.EDGE_PURGE_URLS = [edges[0].url]
    deadline = time.monotonic() + 1.0
    n = 0
    while time.monotonic() < deadline:
        edge.edge_purge(f"sale-{n}")
        n += 1
        time.sleep(0.002)
    assert edge.edge_purge_flush(5)
    times = [at for at, _ in edges[0].purges]
    # The flush at the end may send without the pause; every other pair is an interval apart.
    gaps = [later - earlier for earlier, later in zip(times, times[1:], strict=False)][:-1]
    assert gaps and min(gaps) >= edge.INTERVAL * 0.9, gaps
    assert edges[0].keys() == {f"sale-{k}" for k in range(n)}


def test_a_purge_never_waits_or_raises_when_the_edge_is_down(settings):
    settings.EDGE_PURGE_URLS = [f"http://127.0.0.1:{free_port()}/"]
    before = failed()
    started = time.monotonic()
    for n in range(100):
        edge.edge_purge(f"sale-{n}")
    assert time.monotonic() - started < 0.5
    assert edge.edge_purge_flush(5)
    assert failed() > before


def test_nothing_happens_without_edges(settings, sender):
    settings.EDGE_PURGE_URLS = []
    edge.edge_purge("sale-1")
    assert sender._thread is None and not sender._pending
    assert edge.edge_purge_flush(1)


def test_a_key_that_would_break_the_header_is_left_out(settings, edges):
    settings.EDGE_PURGE_URLS = [edges[0].url]
    edge.edge_purge("sale-1", "two words", "line\r\nbreak", "")
    assert edge.edge_purge_flush(5)
    assert edges[0].keys() == {"sale-1"}


def test_surrogate_keys_add_to_the_xkey_header_once_each():
    response = edge.surrogate_keys(HttpResponse(), "sale-5", "sales")
    edge.surrogate_keys(response, "sales", "goods-3")
    assert response.headers["xkey"] == "sale-5 sales goods-3"
