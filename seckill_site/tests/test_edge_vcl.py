"""deploy/edge.vcl in a real varnishd (tools/edge.py) in front of a small backend that answers
as the shop does: everybody's pages `public` with s-maxage and an `xkey` header, everything
else private. What holds: everybody's pages are kept whoever asks, nothing else is, and a PURGE
by surrogate key drops exactly what it names.

Each test asks for sale ids of its own, so the edge, shared by the module, holds nothing that
another test's answer depends on.
"""

import gzip
import http.client
import re
import threading
import time
from collections import Counter
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
import requests

from tools.edge import edge_down, edge_up, varnish_available
from tools.missing import missing

pytestmark = [
    pytest.mark.processes,
    pytest.mark.skipif(
        not varnish_available(),
        reason=missing("varnishd is not installed: the edge tests did not run", "varnish", "varnish-modules"),
    ),
]

PAGE = "public, max-age=0, s-maxage=300, stale-while-revalidate=30"
POLL = "public, max-age=1, s-maxage=1, stale-while-revalidate=0"
SHARED = re.compile(r"^(?P<lang>/zh-hans)?/goods/(?P<kind>goodsList|detail|getDetails)(?:/(?P<id>[0-9]+))?$")
# The item page's refresh (seckill.item.views.sale_state): the same for every visitor, cookie or not.
SALE_STATE = re.compile(r"^/seckill/saleState/(?P<id>[0-9]+)$")
# Sale ids the backend gets wrong, as a Django mistake would: a cookie set, or no `public`.
SETS_COOKIE, NOT_PUBLIC = 900, 901
# A page kept for 1 s, then served stale for 30 while it is fetched again.
SHORT = 902
# The same, answered 503 "busy" after its first time.
BUSY = 903
# A page kept for 1 s without grace: once expired the edge fetches it again before answering.
BRIEF = 904


class Shop:
    """The backend: counts requests per path and keeps the headers of the last one."""

    def __init__(self) -> None:
        self.hits: Counter[str] = Counter()
        self.seen: dict[str, dict[str, str]] = {}
        self.failing = False  # every answer but /healthz a 503, as Django's without a database
        self.down = False  # the connection closed unanswered, as a process gone
        self.unhealthy = False  # /healthz answered 503, every other request as usual
        shop = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"  # keep-alive towards varnishd, as gunicorn does

            def do_GET(self):
                self.rfile.read(int(self.headers.get("Content-Length") or 0))
                if shop.down:
                    self.close_connection = True
                    return
                shop.hits[self.path] += 1
                shop.seen[self.path] = dict(self.headers)
                status, headers, body = shop.answer(self.path, self.headers.get("Cookie", ""))
                if shop.failing and self.path != "/healthz":
                    status, headers, body = 503, {"Retry-After": "1"}, b"no database"
                if shop.unhealthy and self.path == "/healthz":
                    status, headers, body = 503, {}, b"unhealthy"
                self.send_response(status)
                for name, value in {**headers, "Content-Length": str(len(body))}.items():
                    self.send_header(name, value)
                self.end_headers()
                if self.command != "HEAD":
                    self.wfile.write(body)

            do_HEAD = do_POST = do_GET

            def log_message(self, *args):
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        self.address = f"127.0.0.1:{self.server.server_address[1]}"

    def answer(self, path: str, cookie: str) -> tuple[int, dict[str, str], bytes]:
        state = SALE_STATE.match(path)
        if state is not None:
            headers = {"Content-Type": "application/json", "Cache-Control": POLL, "xkey": f"sale-{state['id']}"}
            return 200, headers, f'{{"stockCount": 5, "cookie": "{cookie}", "at": {time.monotonic()}}}'.encode()
        match = SHARED.match(path)
        if match is None:  # a shopper's own page, even if it claimed to be everybody's
            return 200, {"Cache-Control": PAGE, "xkey": "sales"}, f"private {path} {cookie}".encode()
        sale = match["id"]
        keys = {"xkey": f"sale-{sale} sales" if sale else "sales"}
        if match["kind"] == "getDetails":
            json = {"Content-Type": "application/json"}
            if "sessionid=" in cookie:
                return 200, {**json, "Cache-Control": "private, no-cache"}, f'{{"user": "{cookie}"}}'.encode()
            return 200, {**json, "Cache-Control": POLL, **keys}, f'{{"user": null, "at": {time.monotonic()}}}'.encode()
        language = "zh-hans" if match["lang"] else "en"
        body = f"<p>{language} {path} {'a visitor' if cookie else 'anybody'} {time.monotonic()}</p>" * 40
        headers = {"Content-Type": "text/html; charset=utf-8", "Cache-Control": PAGE, **keys}
        if sale == str(SETS_COOKIE):
            headers["Set-Cookie"] = "sessionid=new; HttpOnly"
        elif sale == str(NOT_PUBLIC):
            headers["Cache-Control"] = "max-age=0, s-maxage=300"
        elif sale == str(BUSY) and self.hits[path] > 1:
            return 503, {"Retry-After": "1"}, b"busy, retry"
        elif sale in (str(SHORT), str(BUSY)):
            headers["Cache-Control"] = "public, max-age=0, s-maxage=1, stale-while-revalidate=30"
        elif sale == str(BRIEF):
            headers["Cache-Control"] = "public, max-age=0, s-maxage=1, stale-while-revalidate=0"
        return 200, headers, body.encode()


@pytest.fixture(scope="module")
def shop():
    backend = Shop()
    yield backend
    backend.server.shutdown()


@pytest.fixture(scope="module")
def edge(shop, tmp_path_factory):
    directory = tmp_path_factory.mktemp("edge")
    url = edge_up(directory, shop.address)
    yield url
    edge_down(directory)


def get(edge: str, path: str, **headers: str) -> requests.Response:
    return requests.get(f"{edge}{path}", headers=headers, timeout=10)


def purge(edge: str, keys: str | None, *, source: str = "127.0.0.1") -> http.client.HTTPResponse:
    """A PURGE sent from `source` (any loopback address: 127.0.0.2 is not in the ACL)."""
    host, port = edge.removeprefix("http://").split(":")
    connection = http.client.HTTPConnection(host, int(port), timeout=10, source_address=(source, 0))
    connection.request("PURGE", "/", headers={"xkey-purge": keys} if keys is not None else {})
    response = connection.getresponse()
    response.read()
    connection.close()
    return response


def test_a_shared_page_is_kept_for_a_visitor_with_cookies_and_one_without(edge, shop):
    path = "/goods/detail/1"
    first = get(edge, path, Cookie="sessionid=alice; csrftoken=x", **{"Accept-Language": "zh-hans"})
    second = get(edge, path)
    assert (first.status_code, first.headers["X-Cache"]) == (200, "MISS")
    assert second.headers["X-Cache"] == "HIT"
    assert second.content == first.content
    assert shop.hits[path] == 1
    # The backend rendered the page for anybody: no visitor's cookie or language reached it.
    assert "Cookie" not in shop.seen[path] and "Accept-Language" not in shop.seen[path]
    assert b"anybody" in first.content
    assert "xkey" not in second.headers and "Age" in second.headers


def test_a_private_url_is_never_kept(edge, shop):
    path = "/orders/list"
    answers = [get(edge, path, Cookie="sessionid=alice") for _ in range(2)]
    assert [answer.headers["X-Cache"] for answer in answers] == ["PASS", "PASS"]
    assert shop.hits[path] == 2
    assert shop.seen[path]["Cookie"] == "sessionid=alice"


def test_a_post_to_a_shared_url_is_passed(edge, shop):
    path = "/goods/detail/11"
    answer = requests.post(f"{edge}{path}", data=b"x", timeout=10)
    assert answer.headers["X-Cache"] == "PASS"
    assert get(edge, path).headers["X-Cache"] == "MISS"
    assert shop.hits[path] == 2


@pytest.mark.parametrize("sale", [SETS_COOKIE, NOT_PUBLIC], ids=["set-cookie", "not-public"])
def test_an_answer_with_a_cookie_or_without_public_is_not_kept(edge, shop, sale):
    path = f"/goods/detail/{sale}"
    answers = [get(edge, path) for _ in range(3)]
    assert [answer.headers["X-Cache"] for answer in answers] == ["PASS"] * 3
    assert shop.hits[path] == 3


def test_a_query_string_makes_a_shared_url_a_pass(edge, shop):
    path = "/goods/detail/12?page=2"
    assert [get(edge, path).headers["X-Cache"] for _ in range(2)] == ["PASS", "PASS"]
    assert shop.hits[path] == 2


def test_the_poll_is_shared_but_a_logged_in_shoppers_passes(edge, shop):
    path = "/goods/getDetails/2"
    anonymous = [get(edge, path, Cookie="csrftoken=x") for _ in range(2)]
    assert [answer.headers["X-Cache"] for answer in anonymous] == ["MISS", "HIT"]
    assert anonymous[0].json()["user"] is None
    mine = get(edge, path, Cookie="csrftoken=x; sessionid=alice")
    assert mine.headers["X-Cache"] == "PASS"
    assert "sessionid=alice" in mine.json()["user"]
    token = get(edge, path, Authorization="Token abc")
    assert token.headers["X-Cache"] == "PASS"
    assert shop.hits[path] == 3


def test_the_sale_state_is_one_copy_for_every_shopper_and_purged_with_its_sale(edge, shop):
    path = "/seckill/saleState/12"
    alice = get(edge, path, Cookie="sessionid=alice; csrftoken=a", **{"Accept-Language": "zh-hans"})
    bob = get(edge, path, Cookie="sessionid=bob; csrftoken=b")
    assert [alice.headers["X-Cache"], bob.headers["X-Cache"]] == ["MISS", "HIT"]
    assert bob.content == alice.content and alice.json()["cookie"] == ""  # no shopper's cookie reached it
    assert "Cookie" not in shop.seen[path] and "Accept-Language" not in shop.seen[path]
    assert "Set-Cookie" not in bob.headers and "xkey" not in bob.headers and "Age" in bob.headers
    assert shop.hits[path] == 1
    answer = purge(edge, "sale-12")
    assert (answer.status, answer.getheader("xkey-purged")) == (200, "1")
    assert get(edge, path, Cookie="sessionid=carol").headers["X-Cache"] == "MISS"
    assert shop.hits[path] == 2
    # Only the plain address: a query or a word for an id is passed to Django.
    for other in (f"{path}?goodsId=12", "/seckill/saleState/abc"):
        assert [get(edge, other).headers["X-Cache"] for _ in range(2)] == ["PASS", "PASS"]


def test_the_poll_is_kept_one_second_without_grace(edge, shop):
    path = "/goods/getDetails/3"
    assert get(edge, path).headers["X-Cache"] == "MISS"
    assert get(edge, path).headers["X-Cache"] == "HIT"
    time.sleep(1.2)
    assert get(edge, path).headers["X-Cache"] == "MISS"  # stale-while-revalidate=0: no stale copy
    assert shop.hits[path] == 2


def test_an_expired_page_is_served_stale_while_it_is_fetched_again(edge, shop):
    path = f"/goods/detail/{SHORT}"
    first = get(edge, path)
    time.sleep(1.2)
    stale = get(edge, path)
    assert (stale.headers["X-Cache"], stale.content) == ("HIT", first.content)
    deadline = time.monotonic() + 5
    while shop.hits[path] < 2 and time.monotonic() < deadline:
        time.sleep(0.05)
    assert shop.hits[path] == 2  # fetched again in the background
    assert get(edge, path).content != first.content


def test_an_expired_page_stays_in_grace_while_the_backend_answers_busy(edge, shop):
    path = f"/goods/detail/{BUSY}"
    first = get(edge, path)
    time.sleep(1.2)
    for _ in range(3):
        stale = get(edge, path)
        assert (stale.status_code, stale.headers["X-Cache"], stale.content) == (200, "HIT", first.content)
        time.sleep(0.2)
    assert shop.hits[path] >= 2  # each background fetch got a 503, and was thrown away


def test_english_and_chinese_pages_are_separate_objects(edge, shop):
    english, chinese = get(edge, "/goods/detail/5"), get(edge, "/zh-hans/goods/detail/5")
    assert (english.headers["X-Cache"], chinese.headers["X-Cache"]) == ("MISS", "MISS")
    assert b"<p>en " in english.content and b"<p>zh-hans " in chinese.content
    assert get(edge, "/zh-hans/goods/detail/5").content == chinese.content
    assert get(edge, "/goods/detail/5").content == english.content


def test_a_page_is_kept_once_and_handed_out_gzipped_or_not(edge, shop):
    path = "/goods/detail/6"
    zipped = get(edge, path, **{"Accept-Encoding": "gzip"})
    plain = get(edge, path, **{"Accept-Encoding": "identity"})
    assert zipped.headers.get("Content-Encoding") == "gzip" and "Content-Encoding" not in plain.headers
    assert plain.headers["X-Cache"] == "HIT" and zipped.content == plain.content  # requests gunzips
    raw = requests.get(f"{edge}{path}", headers={"Accept-Encoding": "gzip"}, stream=True, timeout=10).raw.read()
    assert gzip.decompress(raw) == plain.content
    assert shop.hits[path] == 1


def test_a_small_answer_is_not_gzipped(edge, shop):
    """The poll (a few hundred bytes) fits a packet either way: zipped, each hit by a client that
    does not take gzip would be unzipped again."""
    path = "/goods/getDetails/10"
    get(edge, path, **{"Accept-Encoding": "gzip"})
    for encoding in ("gzip", "identity"):
        answer = get(edge, path, **{"Accept-Encoding": encoding})
        assert answer.status_code == 200 and "Content-Encoding" not in answer.headers


def test_purge_drops_exactly_the_objects_tagged_with_its_keys(edge, shop):
    tagged = ["/goods/detail/7", "/zh-hans/goods/detail/7", "/goods/getDetails/7"]
    others = ["/goods/detail/8", "/zh-hans/goods/detail/8"]
    for path in tagged + others:
        get(edge, path)
        assert get(edge, path).headers["X-Cache"] == "HIT"
    answer = purge(edge, "sale-7 sale-nothing")
    assert (answer.status, answer.getheader("xkey-purged")) == (200, "3")
    assert [get(edge, path).headers["X-Cache"] for path in tagged] == ["MISS"] * 3
    assert [get(edge, path).headers["X-Cache"] for path in others] == ["HIT"] * 2


def test_purge_is_refused_from_outside_the_acl_and_without_keys(edge, shop):
    path = "/goods/detail/9"
    get(edge, path)
    assert purge(edge, "sale-9", source="127.0.0.2").status == 403
    assert purge(edge, None).status == 400
    assert get(edge, path).headers["X-Cache"] == "HIT"
    assert shop.hits[path] == 1 and "/" not in shop.hits  # a PURGE never reaches the backend


def test_purgers_named_at_start_replace_the_default_localhost(shop, tmp_path):
    """make partition-test's edge is a host of its own: its ACL names the shop's hosts
    (edge-purgers.vcl, written by tools/edge.py) instead of deploy's localhost."""
    edge = edge_up(tmp_path, shop.address, purgers=["127.0.0.2", "127.0.1.0/24"])
    try:
        assert purge(edge, "sale-nothing", source="127.0.0.2").status == 200
        assert purge(edge, "sale-nothing", source="127.0.1.9").status == 200
        assert purge(edge, "sale-nothing").status == 403  # 127.0.0.1: not named this time
    finally:
        edge_down(tmp_path)


@pytest.fixture
def alone(tmp_path):
    """An edge and a backend of the test's own: it makes the backend fail, which the edge
    remembers for a few seconds whatever the page."""
    backend = Shop()
    url = edge_up(tmp_path, backend.address)
    yield url, backend
    edge_down(tmp_path)
    backend.server.shutdown()


def test_a_page_past_its_grace_is_fetched_again_while_the_shop_answers(alone):
    edge, shop = alone
    path = f"/goods/detail/{BRIEF}"
    first = get(edge, path)
    time.sleep(1.2)
    again = get(edge, path)
    assert (again.headers["X-Cache"], shop.hits[path]) == ("MISS", 2)
    assert again.content != first.content and "X-Edge-Grace" not in again.headers


@pytest.mark.parametrize("fault", ["failing", "down"])
def test_a_page_past_its_grace_is_served_stale_while_the_shop_fails(alone, fault):
    edge, shop = alone
    pages = [f"/goods/detail/{BRIEF}", f"/zh-hans/goods/detail/{BRIEF}", f"/goods/getDetails/{BRIEF}"]
    first = {path: get(edge, path) for path in pages}
    setattr(shop, fault, True)
    time.sleep(1.2)
    for _ in range(5):
        for path in pages:
            stale = get(edge, path)
            assert (stale.status_code, stale.headers["X-Cache"]) == (200, "STALE"), path
            assert stale.content == first[path].content and int(stale.headers["Age"]) >= 1
    if fault == "failing":
        # The first fetch, the one that failed, then at most one in the background per answer:
        # the copy is never held back for a fetch of its own.
        assert all(2 <= shop.hits[path] <= 2 + 5 for path in pages)
    # A shopper's own request is never answered from a copy.
    assert get(edge, "/orders/list", Cookie="sessionid=alice").status_code == 503
    setattr(shop, fault, False)
    deadline = time.monotonic() + 5
    while get(edge, pages[0]).content == first[pages[0]].content and time.monotonic() < deadline:
        time.sleep(0.1)
    fresh = get(edge, pages[0])
    assert fresh.content != first[pages[0]].content and fresh.headers["X-Cache"] in ("HIT", "MISS")


def test_a_page_past_its_grace_is_served_stale_while_the_probe_fails(alone):
    """The probe (shop_health on /healthz) alone: the pages still answer, so only the probe can
    have made the edge hand out the copy, and the fetch it started behind it refreshes it."""
    edge, shop = alone
    path = f"/goods/detail/{BRIEF}"
    first = get(edge, path)
    shop.unhealthy, failed_from = True, shop.hits["/healthz"]
    deadline = time.monotonic() + 10
    while shop.hits["/healthz"] < failed_from + 3 and time.monotonic() < deadline:  # 3 of 5: sick
        time.sleep(0.1)
    time.sleep(0.2)  # the third failure counted
    stale = get(edge, path)
    assert (stale.headers["X-Cache"], stale.content) == ("STALE", first.content)
    while shop.hits[path] < 2 and time.monotonic() < deadline:
        time.sleep(0.05)
    assert get(edge, path).content != first.content  # the background fetch got a fresh one


def test_a_purged_page_is_not_served_stale(alone):
    edge, shop = alone
    path, kept = f"/goods/detail/{BRIEF}", "/goods/detail/13"
    first = get(edge, path)
    get(edge, kept)
    shop.failing = True
    assert purge(edge, f"sale-{BRIEF}").getheader("xkey-purged") == "1"
    time.sleep(1.2)
    gone = get(edge, path)
    assert (gone.status_code, gone.headers["X-Cache"]) == (503, "PASS")  # fetched, not kept
    assert gone.content == b"no database" and first.content not in gone.content
    # An object the purge did not name is still served as it was (fresh: s-maxage 300).
    assert get(edge, kept).headers["X-Cache"] == "HIT"


def test_a_first_miss_gets_the_shops_own_503(alone):
    edge, shop = alone
    shop.failing = True
    answer = get(edge, "/goods/detail/14")
    assert (answer.status_code, answer.headers["X-Cache"], answer.content) == (503, "PASS", b"no database")
