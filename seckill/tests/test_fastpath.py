"""seckill.fastpath: its answers are Django's, byte for byte, and it answers nothing else.

Each answer is compared, at the WSGI level (status line, header list in order, body), with what
Django's own application gives to the same request with the fast path out of the way. Real
PostgreSQL and Redis: the sales are loaded into Redis as the shop loads them."""

import io
import threading
import time

import pytest
from prometheus_client import REGISTRY

from sales import sale_state
from seckill.fastpath import FastPath
from seckill.metrics import attempts_folded
from seckill_site import metrics
from seckill_site.metrics import ThreadCounts
from testutils.factories.sales import make_sale
from testutils.factories.users import make_user
from testutils.shoppers import path_for
from testutils.wsgi import LANGUAGES, REQUEST_ID, answered_below_django, call, environ

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def long_marks(monkeypatch):
    # A loaded machine may take over a second between two requests of a test.
    monkeypatch.setattr(sale_state.marks, "SOLD_OUT_MARK_SECONDS", 600.0)
    monkeypatch.setattr(sale_state.marks, "WINDOW_CACHE_SECONDS", 600.0)


def buy_requests(sale_id: int, path: str = "a1b2c3") -> dict[str, tuple[str, str, bytes]]:
    return {
        "page": ("POST", f"/seckill/{path}/doSeckill", f"goodsId={sale_id}".encode()),
        "page with a csrf token": (
            "POST",
            f"/seckill/{path}/doSeckill",
            f"csrfmiddlewaretoken=x&goodsId={sale_id}".encode(),
        ),
        "api": ("POST", f"/api/v1/sales/{sale_id}/buy/{path}", b""),
    }


def _sale(kind: str):
    if kind == "sold out":
        sale = make_sale(stock=5)
        sale_state.sold_out_mark(sale.pk)
        return sale, "sold out"
    if kind == "not started":
        return make_sale(stock=5, starts_in=3600), "the sale has not started yet"
    return make_sale(stock=5, starts_in=-7200, lasts=3600), "the sale has ended"


@pytest.mark.parametrize("language", LANGUAGES)
@pytest.mark.parametrize("kind", ["sold out", "not started", "ended"])
def test_buy_refusals_are_djangos_bytes(apps, kind, language):
    django, fast = apps
    sale, english = _sale(kind)
    for name, (method, path, body) in buy_requests(sale.pk).items():
        env = environ(method, path, body=body, **LANGUAGES[language])
        expected = call(django, env)  # Django's path also reads the window into this process
        with answered_below_django(fast, expected=True):
            got = call(fast, env)
        assert got == expected, name
        assert expected[0] == "200 OK" and ("X-Request-ID", REQUEST_ID) in expected[1]
        assert (english.encode() in expected[2]) is (language == "en"), expected[2].decode()


def test_logged_in_shopper_gets_the_same_refusal(apps, client):
    """The refusal is a public fact: a shopper's session changes nothing in it."""
    django, fast = apps
    sale, _msg = _sale("not started")
    user = make_user()
    client.force_login(user)
    cookie = f"sessionid={client.cookies['sessionid'].value}"
    env = environ("POST", f"/seckill/{path_for(user.pk, sale.pk)}/doSeckill", body=f"goodsId={sale.pk}".encode(),
                  HTTP_COOKIE=cookie)  # fmt: skip
    expected = call(django, env)
    with answered_below_django(fast, expected=True):
        assert call(fast, env) == expected


def test_never_for_a_sale_with_stock(apps):
    django, fast = apps
    sale = make_sale(stock=5)
    for _name, (method, path, body) in buy_requests(sale.pk).items():
        env = environ(method, path, body=body)
        expected = call(django, env)
        with answered_below_django(fast, expected=False):
            got = call(fast, env)
        assert got == expected  # not logged in, from the view


def test_never_over_the_body_cap_nor_for_odd_bodies(apps, settings):
    django, fast = apps
    sale, _msg = _sale("sold out")
    cap = settings.SECKILL_MAX_REQUEST_BYTES
    for name, extra in {
        "over the cap": {"CONTENT_LENGTH": str(cap + 1)},
        "a multipart body": {"CONTENT_TYPE": "multipart/form-data; boundary=x"},
        "no length": {"CONTENT_LENGTH": ""},
        "a bad id": {"wsgi.input": io.BytesIO(b"goodsId=0"), "CONTENT_LENGTH": "9"},
    }.items():
        env = environ("POST", "/seckill/p/doSeckill", body=f"goodsId={sale.pk}".encode())
        env.update(extra)
        expected = call(django, env)
        with answered_below_django(fast, expected=False):
            got = call(fast, env)
        assert got[0] == expected[0], name
    over = call(fast, dict(environ("POST", f"/api/v1/sales/{sale.pk}/buy/p"), CONTENT_LENGTH=str(cap + 1)))
    assert over[0].startswith("413")


def test_unknown_paths_and_bad_ids_go_to_django(apps):
    _django, fast = apps
    sale, _msg = _sale("sold out")
    for method, path in [
        ("POST", f"/api/v1/sales/{sale.pk}/buy"),
        ("POST", f"/api/v1/sales/x{sale.pk}/buy/p"),
        ("GET", f"/seckill/p/doSeckill?goodsId={sale.pk}"),
        ("GET", "/goods/getDetails/0"),
        ("GET", "/api/v1/sales/abc"),
        ("GET", "/healthz"),
    ]:
        with answered_below_django(fast, expected=False):
            call(fast, environ(method, path))


@pytest.mark.parametrize("language", LANGUAGES)
@pytest.mark.parametrize("status", ["not started", "on", "ended"])
def test_public_detail_is_djangos_bytes(apps, status, language):
    django, fast = apps
    starts_in, lasts = {"not started": (3600, 3600), "on": (-60, 3600), "ended": (-7200, 3600)}[status]
    sale = make_sale(stock=5, starts_in=starts_in, lasts=lasts)
    for path in (f"/goods/getDetails/{sale.pk}", f"/zh-hans/goods/getDetails/{sale.pk}", f"/api/v1/sales/{sale.pk}"):
        env = environ("GET", path, **LANGUAGES[language])
        with answered_below_django(fast, expected=False):
            first = call(fast, env)  # Django answers, the fast path keeps a copy
        with answered_below_django(fast, expected=True):
            again = call(fast, dict(env, HTTP_X_REQUEST_ID="test-request-2"))
        expected = call(django, env)
        assert first == expected
        assert again[0] == expected[0] and again[2] == expected[2]
        assert again[1] == [(n, "test-request-2" if n == "X-Request-ID" else v) for n, v in expected[1]]
        assert dict(expected[1])["Cache-Control"].startswith("public, max-age=1")


def test_behind_an_edge_getdetails_is_left_to_the_edge(apps, settings):
    """The edge keeps the poll for its second; a copy below Django as well would let the edge
    keep one already a second old. The API's detail, which no edge keeps, is still copied."""
    settings.EDGE_PURGE_URLS = ["http://127.0.0.1:9/"]
    fast = FastPath(apps[1].app, counts=ThreadCounts())
    sale = make_sale(stock=5)
    for path, copied in ((f"/goods/getDetails/{sale.pk}", False), (f"/api/v1/sales/{sale.pk}", True)):
        call(fast, environ("GET", path))
        with answered_below_django(fast, expected=copied):
            call(fast, environ("GET", path))
    fast.counts.fold()  # nothing left for its folder thread to add to a later test's figures


def test_detail_for_a_shopper_goes_to_django(apps, client):
    django, fast = apps
    sale = make_sale(stock=5)
    user = make_user()
    client.force_login(user)
    cookie = f"sessionid={client.cookies['sessionid'].value}"
    path = f"/goods/getDetails/{sale.pk}"
    call(fast, environ("GET", path))  # an anonymous copy exists
    with answered_below_django(fast, expected=False):
        mine = call(fast, environ("GET", path, HTTP_COOKIE=cookie))
    assert b'"mobile"' in mine[2] or str(user.pk).encode() in mine[2]
    assert not any(name == "Cache-Control" and "public" in value for name, value in mine[1])
    with answered_below_django(fast, expected=False):
        call(fast, environ("GET", f"/api/v1/sales/{sale.pk}", HTTP_AUTHORIZATION="Token abc"))


def test_detail_copy_lasts_at_most_a_second(apps, monkeypatch):
    from seckill import fastpath

    _django, fast = apps
    sale = make_sale(stock=5)
    env = environ("GET", f"/goods/getDetails/{sale.pk}")
    call(fast, env)
    monkeypatch.setattr(fastpath.time, "monotonic", lambda real=fastpath.time.monotonic: real() + 1.01)
    with answered_below_django(fast, expected=False):
        call(fast, env)


def _count(view: str, method: str, status: str) -> float:
    labels = {"view": view, "method": method, "status": status}
    return REGISTRY.get_sample_value("seckill_http_requests_total", labels) or 0.0


def _latency_count(view: str) -> float:
    return REGISTRY.get_sample_value("seckill_http_request_duration_seconds_count", {"view": view}) or 0.0


def test_metrics_count_what_the_fast_path_answers(apps):
    django, fast = apps
    sale, _msg = _sale("sold out")
    env = environ("POST", f"/api/v1/sales/{sale.pk}/buy/p")
    view = "<sold out before routing>"
    attempts = REGISTRY.get_sample_value("seckill_attempts_total", {"outcome": "sold_out"}) or 0.0
    before, latency = _count(view, "POST", "200"), _latency_count(view)
    call(django, env)
    assert _count(view, "POST", "200") == before + 1  # Django's path, counted as it always was
    fast.counts.fold_listeners.append(attempts_folded)
    for _ in range(3):
        call(fast, env)
    fast.counts.fold()  # what a scrape sees within FOLD_SECONDS (the process's folder thread)
    assert _count(view, "POST", "200") == before + 4
    assert _latency_count(view) == latency + 4
    assert REGISTRY.get_sample_value("seckill_attempts_total", {"outcome": "sold_out"}) == attempts + 4

    detail = make_sale(stock=5)
    env = environ("GET", f"/goods/getDetails/{detail.pk}")
    route = "goods/getDetails/<str:sale_id>"
    before = _count(route, "GET", "200")
    call(fast, env)  # Django's
    call(fast, env)  # the copy's
    fast.counts.fold()
    assert _count(route, "GET", "200") == before + 2


def test_a_thread_that_stops_answering_has_its_counts_folded_without_another_request(apps):
    """The last answers before traffic stops (a sale's end) reach the metrics by themselves: the
    process's folder thread folds every thread's counts, not only the thread's own next answer."""
    _django, fast = apps
    sale, _msg = _sale("sold out")
    env = environ("POST", f"/api/v1/sales/{sale.pk}/buy/p")
    view = "<sold out before routing>"
    before = _count(view, "POST", "200")
    answering = threading.Thread(target=lambda: [call(fast, env) for _ in range(7)])
    answering.start()
    answering.join()
    deadline = time.monotonic() + 5 * metrics.FOLD_SECONDS
    while _count(view, "POST", "200") < before + 7 and time.monotonic() < deadline:
        time.sleep(0.05)
    assert _count(view, "POST", "200") == before + 7  # no fold() called here: the folder's
    fast.counts.fold()
    assert _count(view, "POST", "200") == before + 7  # and never twice


def test_request_id_is_returned(apps):
    _django, fast = apps
    sale, _msg = _sale("sold out")
    env = environ("POST", f"/api/v1/sales/{sale.pk}/buy/p")
    del env["HTTP_X_REQUEST_ID"]
    ids = {dict(call(fast, env)[1])["X-Request-ID"] for _ in range(2)}
    assert len(ids) == 2 and all(len(i) == 32 for i in ids)
    env["HTTP_X_REQUEST_ID"] = "bad id with spaces"
    assert dict(call(fast, env)[1])["X-Request-ID"] != "bad id with spaces"


def test_answers_are_logged_aggregated_not_one_line_each(apps, caplog, monkeypatch):
    from seckill import fastpath

    _django, fast = apps
    sale, _msg = _sale("sold out")
    env = environ("POST", f"/api/v1/sales/{sale.pk}/buy/p")
    monkeypatch.setattr(fastpath, "LOG_SECONDS", 0.0)
    with caplog.at_level("INFO", logger="seckill.request"):
        for _ in range(5):
            call(fast, env)
        fast.counts.fold()
    lines = [r for r in caplog.records if r.name == "seckill.request"]
    # One aggregated line (two if a slow machine crossed the thread's one-second fold), never one per answer.
    assert 1 <= len(lines) <= 2 and all(r.getMessage().startswith("fast path:") for r in lines)
    assert sum(r.fastpath_answers["<sold out before routing> 200"] for r in lines) == 5


@pytest.mark.parametrize("error", ["connection", "no cluster node"])
def test_a_redis_outage_in_the_fast_path_is_left_to_django(apps, monkeypatch, error):
    """The detail copy's clock is Redis's: when reading it fails, Django answers (its 503 layer
    knows the outage), never an exception out of the WSGI application. A cluster client that
    reaches no node raises RedisClusterException, which is not a RedisError."""
    from redis.exceptions import ConnectionError as RedisConnectionError
    from redis.exceptions import RedisClusterException

    from seckill.fastpath import detail as fastpath

    _django, fast = apps
    sale = make_sale(stock=5)
    env = environ("GET", f"/goods/getDetails/{sale.pk}")
    call(fast, env)  # Django answers and the fast path keeps its copy, timed by Redis's clock
    raised = {"connection": RedisConnectionError("cut"), "no cluster node": RedisClusterException("no node")}[error]

    def clock():
        raise raised

    monkeypatch.setattr(fastpath, "redis_now", clock)
    monkeypatch.setattr(fastpath.time, "monotonic", lambda real=fastpath.time.monotonic: real() + 1.01)
    with answered_below_django(fast, expected=False):
        status, _headers, _body = call(fast, env)
    assert status.startswith("200"), status  # Django's own clock read is not the one patched


def _without_clock(body: bytes) -> dict:
    import json

    data = json.loads(body)
    data["data"].pop("now")
    return data


@pytest.mark.parametrize("language", LANGUAGES)
def test_the_sale_state_is_copied_for_every_visitor_session_or_not(apps, client, language):
    """The item page's refresh reads nothing of the visitor: a shopper's session cookie does
    not pass it by, and the copy is Django's answer (its clock `now` at most a second old)."""
    django, fast = apps
    sale = make_sale(stock=5)
    client.force_login(make_user())
    session = f"sessionid={client.cookies['sessionid'].value}"
    cookie = "; ".join(c for c in (LANGUAGES[language].get("HTTP_COOKIE"), session) if c)
    env = environ("GET", f"/seckill/saleState/{sale.pk}", **dict(LANGUAGES[language], HTTP_COOKIE=cookie))
    with answered_below_django(fast, expected=False):
        first = call(fast, env)
    with answered_below_django(fast, expected=True):
        again = call(fast, dict(env, HTTP_X_REQUEST_ID="test-request-2"))
    expected = call(django, env)
    assert first[0] == again[0] == expected[0] == "200 OK"
    assert again[2] == first[2] and _without_clock(first[2]) == _without_clock(expected[2])
    assert dict(expected[1])["Cache-Control"] == "public, max-age=1, s-maxage=1, stale-while-revalidate=0"
    assert not any(name.lower() == "set-cookie" for name, _value in expected[1])


def test_behind_an_edge_the_sale_state_is_left_to_the_edge(apps, settings):
    settings.EDGE_PURGE_URLS = ["http://127.0.0.1:9/"]
    fast = FastPath(apps[1].app, counts=ThreadCounts())
    path = f"/seckill/saleState/{make_sale(stock=5).pk}"
    call(fast, environ("GET", path))
    with answered_below_django(fast, expected=False):
        call(fast, environ("GET", path))
    fast.counts.fold()
