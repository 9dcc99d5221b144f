"""The waiting room's pass, required by a sale's buy, captcha and path while its room is on:
in Django's views (the test client) and below Django (the fast path, at the WSGI level), on
real Redis and PostgreSQL. Without a pass the shopper is told where they stand and where to
wait, in the form their client understands; with one they buy; queue everyone refuses even them."""

import time

import pytest

from seckill_site.redis import client as redis_client
from testutils.factories.sales import make_sale
from testutils.shoppers import path_for
from testutils.wsgi import REQUEST_ID, answered_below_django, call, environ
from waitingroom import keys, queue
from waitingroom.codes import WaitingCode
from waitingroom.passes import pass_cookie
from waitingroom.queue import place
from waitingroom.room import Room, room_forget, room_write, shop_switches_write
from waitingroom.wait_ticket import wait_cookie

pytestmark = pytest.mark.django_db

CODE = WaitingCode.IN_WAITING_ROOM.code
JSON = {"HTTP_ACCEPT": "application/json"}


@pytest.fixture(autouse=True)
def forget():
    room_forget()
    yield
    shop_switches_write(queue_all=False, stop=False)
    room_forget()


def _sale_in_a_crowd(*, ahead: int = 5, **room):
    """A sale with its room on, admitting one a minute, `ahead` shoppers already in line."""
    sale = make_sale(stock=10)
    start = int(time.time()) - 5
    room_write(sale.pk, Room(on=True, starts_at=start, pass_seconds=600, **{"admit_per_minute": 1, **room}))
    for user_id in range(10**9, 10**9 + ahead):
        place(sale.pk, user_id)
    return sale


def _requests(sale_id: int) -> dict[str, tuple[str, str, dict]]:
    return {
        "captcha": ("get", "/seckill/verifyCode", {"goodsId": sale_id}),
        "spoken captcha": ("get", "/seckill/verifyAudio", {"goodsId": sale_id}),
        "path": ("get", "/seckill/path", {"goodsId": sale_id, "verifyCode": "1"}),
        "buy": ("post", "/seckill/a1b2c3/doSeckill", {"goodsId": sale_id}),
        "api captcha": ("get", f"/api/v1/sales/{sale_id}/captcha", {}),
        "api spoken captcha": ("get", f"/api/v1/sales/{sale_id}/captcha/audio", {}),
        "api path": ("post", f"/api/v1/sales/{sale_id}/path", {"verifyCode": "1"}),
        "api buy": ("post", f"/api/v1/sales/{sale_id}/buy/a1b2c3", {}),
    }


def test_without_a_pass_the_buy_captcha_and_path_answer_where_to_wait(shopper):
    sale = _sale_in_a_crowd()
    for name, (method, url, data) in _requests(sale.pk).items():
        response = getattr(shopper, method)(url, data, **JSON)
        assert response.status_code == 429, name
        assert response["Retry-After"] == "5", name
        body = response.json()
        assert body["code"] == CODE, name
        assert set(body["data"]) == {"position", "aheadOfYou", "etaSeconds", "waitingRoomUrl"}
        # Asking made the shopper arrive: they are in line behind the crowd.
        assert body["data"]["position"] == 6 and body["data"]["aheadOfYou"] == 4, name
        assert body["data"]["waitingRoomUrl"] == f"/waiting-room/{sale.pk}"
        assert "#6" in body["msg"], name


def test_a_browser_form_goes_to_the_waiting_page_and_anything_else_gets_503(shopper):
    sale = _sale_in_a_crowd()
    url = "/seckill/a1b2c3/doSeckill"
    page = shopper.post(url, {"goodsId": sale.pk}, HTTP_ACCEPT="text/html,application/xhtml+xml,*/*;q=0.8")
    assert page.status_code == 303 and page["Location"] == f"/waiting-room/{sale.pk}"
    crawler = shopper.post(url, {"goodsId": sale.pk}, HTTP_ACCEPT="*/*")
    assert crawler.status_code == 503 and int(crawler["Retry-After"]) >= 5


def test_the_answer_is_in_the_shoppers_language(shopper):
    sale = _sale_in_a_crowd()
    shopper.cookies["django_language"] = "zh-hans"
    body = shopper.post("/seckill/a1b2c3/doSeckill", {"goodsId": sale.pk}, **JSON).json()
    assert body["data"]["waitingRoomUrl"] == f"/zh-hans/waiting-room/{sale.pk}"
    assert "排队" in body["msg"], body["msg"]
    page = shopper.post("/seckill/a1b2c3/doSeckill", {"goodsId": sale.pk}, HTTP_ACCEPT="text/html")
    assert page["Location"] == f"/zh-hans/waiting-room/{sale.pk}"


def test_an_admitted_shopper_takes_a_pass_and_buys(shopper, flushes):
    sale = _sale_in_a_crowd(ahead=0, admit_per_minute=0)
    status = shopper.get(f"/waiting-room/{sale.pk}/status")
    assert status.status_code == 200
    data = status.json()["data"]
    assert data["state"] == "admitted" and data["position"] == 1 and data["passUntil"] > time.time() + 590
    cookie = status.cookies[pass_cookie(sale.pk)]
    assert cookie["httponly"] and cookie["samesite"] == "Lax" and cookie["path"] == "/"
    assert 595 <= int(cookie["max-age"]) <= 600
    assert shopper.get("/seckill/verifyCode", {"goodsId": sale.pk}).status_code == 200
    path = path_for(shopper.user.pk, sale.pk)
    body = shopper.post(f"/seckill/{path}/doSeckill", {"goodsId": sale.pk}).json()
    assert body["code"] == 0 and body["data"]["status"] == "queued"
    # Logged when taken, with the wait.
    assert redis_client().zscore(keys.admitted_log(sale.pk), shopper.user.pk) is not None
    assert redis_client().zscore(keys.waits(sale.pk), shopper.user.pk) is not None


def test_a_pass_is_for_its_session_only(shopper, client, django_user_model):
    sale = _sale_in_a_crowd(ahead=0, admit_per_minute=0)
    shopper.get(f"/waiting-room/{sale.pk}/status")
    value = shopper.cookies[pass_cookie(sale.pk)].value
    other = django_user_model.objects.create_user(mobile="13800009999", password="x-password-1")
    client.force_login(other)
    client.cookies[pass_cookie(sale.pk)] = value
    assert client.get("/seckill/verifyCode", {"goodsId": sale.pk}, **JSON).json()["code"] == CODE


def test_queue_everyone_refuses_even_a_pass_holder(shopper):
    sale = _sale_in_a_crowd(ahead=0, admit_per_minute=0)
    shopper.get(f"/waiting-room/{sale.pk}/status")
    assert shopper.get("/seckill/verifyCode", {"goodsId": sale.pk}).status_code == 200
    shop_switches_write(queue_all=True, stop=False)
    assert shopper.get("/seckill/verifyCode", {"goodsId": sale.pk}, **JSON).json()["code"] == CODE


def test_a_sale_without_a_room_needs_no_pass(shopper):
    sale = make_sale(stock=3)
    assert shopper.get("/seckill/verifyCode", {"goodsId": sale.pk}).status_code == 200


def test_the_wait_ends_sold_out(shopper, monkeypatch):
    sale = _sale_in_a_crowd(ahead=3)
    monkeypatch.setattr(queue, "STOCK_SECONDS", 0.0)  # as a second later
    redis_client().set(f"{redis_stock_key(sale.pk)}", 0)
    data = shopper.get(f"/waiting-room/{sale.pk}/status").json()["data"]
    assert data["state"] == "sold_out"
    page = shopper.get(f"/waiting-room/{sale.pk}")
    assert page.status_code == 200 and "Sold out" in page.content.decode()


def redis_stock_key(sale_id: int) -> str:
    from sales.sale_state import keys as sale_keys

    return sale_keys.stock(sale_id)


@pytest.mark.parametrize(
    "url, status",
    [
        ("/waiting-room/abc/status", 400),
        ("/waiting-room/0/status", 400),
        ("/waiting-room/99999999/status", 404),
        ("/waiting-room/abc", 404),
        ("/waiting-room/99999999", 404),
        ("/zh-hans/waiting-room/abc", 404),
    ],
)
def test_bad_sale_ids_are_clear_4xx(client, url, status):
    assert client.get(url).status_code == status


def test_the_waiting_page_says_the_place_and_the_wait_in_both_languages(shopper):
    sale = _sale_in_a_crowd(ahead=5)
    page = shopper.get(f"/waiting-room/{sale.pk}").content.decode()
    assert "You are #6 in line" in page and "about 5 min" in page
    assert 'aria-live="polite"' in page and 'http-equiv="refresh"' in page
    chinese = shopper.get(f"/zh-hans/waiting-room/{sale.pk}").content.decode()
    assert "排在第 6 位" in chinese, chinese


def test_an_admitted_shopper_on_the_waiting_page_goes_to_the_item_with_a_pass(shopper):
    sale = _sale_in_a_crowd(ahead=0, admit_per_minute=0)
    page = shopper.get(f"/waiting-room/{sale.pk}")
    assert page.status_code == 303 and page["Location"] == f"/goods/detail/{sale.pk}"
    assert pass_cookie(sale.pk) in page.cookies


def test_a_visitor_not_logged_in_is_asked_to_log_in(client):
    sale = _sale_in_a_crowd()
    page = client.get(f"/waiting-room/{sale.pk}").content.decode()
    assert "/user/index?next=" in page
    assert client.get(f"/waiting-room/{sale.pk}/status").json()["data"]["position"] is None


def test_the_item_page_points_to_the_waiting_room(client):
    sale = _sale_in_a_crowd()
    page = client.get(f"/goods/detail/{sale.pk}").content.decode()
    assert 'data-waiting-room="1"' in page and f'href="/waiting-room/{sale.pk}"' in page


# Below Django: the fast path.


def _cookies(client, sale_id: int, *names: str) -> str:
    found = [f"sessionid={client.cookies['sessionid'].value}"]
    found += [f"{name}={client.cookies[name].value}" for name in names if name in client.cookies]
    return "; ".join(found)


def test_the_fast_path_refuses_a_shopper_without_a_pass_below_django(apps, shopper):
    django, fast = apps
    sale = _sale_in_a_crowd()
    shopper.get(f"/waiting-room/{sale.pk}")  # joined, with a wait ticket
    cookie = _cookies(shopper, sale.pk, wait_cookie(sale.pk))
    requests = [
        environ("POST", "/seckill/a1b2c3/doSeckill", body=f"goodsId={sale.pk}".encode(), HTTP_COOKIE=cookie, **JSON),
        environ("POST", f"/api/v1/sales/{sale.pk}/buy/a1b2c3", HTTP_COOKIE=cookie),
        environ("POST", f"/api/v1/sales/{sale.pk}/path", HTTP_COOKIE=cookie),
        environ("GET", "/seckill/verifyCode", query=f"goodsId={sale.pk}&t=1", HTTP_COOKIE=cookie, **JSON),
        environ("GET", "/seckill/path", query=f"goodsId={sale.pk}&verifyCode=3", HTTP_COOKIE=cookie, **JSON),
        environ("GET", f"/api/v1/sales/{sale.pk}/captcha", HTTP_COOKIE=cookie),
    ]
    import json

    for env in requests:
        with answered_below_django(fast, expected=True):
            status, headers, body = call(fast, env)
        assert status.startswith("429 "), env["PATH_INFO"]
        assert ("X-Request-ID", REQUEST_ID) in headers
        data = json.loads(body)
        assert data["code"] == CODE and data["data"]["position"] == 6, body
    page = environ("POST", "/seckill/a1b2c3/doSeckill", body=f"goodsId={sale.pk}".encode(), HTTP_COOKIE=cookie,
                   HTTP_SEC_FETCH_MODE="navigate", HTTP_ACCEPT="text/html")  # fmt: skip
    with answered_below_django(fast, expected=True):
        status, headers, _body = call(fast, page)
    assert status.startswith("303 ") and ("Location", f"/waiting-room/{sale.pk}") in headers
    crawler = environ("GET", "/seckill/verifyCode", query=f"goodsId={sale.pk}")
    with answered_below_django(fast, expected=True):
        status, headers, _body = call(fast, crawler)
    assert status.startswith("503 ") and any(name == "Retry-After" for name, _v in headers)


def test_the_fast_path_lets_a_pass_holder_through_and_not_while_queueing_everyone(apps, shopper):
    django, fast = apps
    sale = _sale_in_a_crowd(ahead=0, admit_per_minute=0)
    shopper.get(f"/waiting-room/{sale.pk}/status")
    cookie = _cookies(shopper, sale.pk, pass_cookie(sale.pk))
    env = environ("GET", "/seckill/verifyCode", query=f"goodsId={sale.pk}", HTTP_COOKIE=cookie)
    with answered_below_django(fast, expected=False):
        status, _headers, _body = call(fast, env)
    assert status == "200 OK"
    shop_switches_write(queue_all=True, stop=False)
    with answered_below_django(fast, expected=True):
        status, _headers, body = call(fast, dict(env, HTTP_ACCEPT="application/json"))
    assert status.startswith("429 ") and str(CODE).encode() in body


def test_the_fast_path_leaves_a_sale_without_a_room_to_django(apps, shopper):
    django, fast = apps
    sale = make_sale(stock=3)
    env = environ("GET", "/seckill/verifyCode", query=f"goodsId={sale.pk}", HTTP_COOKIE=_cookies(shopper, sale.pk))
    with answered_below_django(fast, expected=False):
        assert call(fast, env)[0] == "200 OK"


def test_the_fast_path_answers_the_status_of_a_shopper_in_line_as_django_does(apps, shopper):
    django, fast = apps
    sale = _sale_in_a_crowd(ahead=5)
    shopper.get(f"/waiting-room/{sale.pk}")
    env = environ(
        "GET", f"/waiting-room/{sale.pk}/status", HTTP_COOKIE=_cookies(shopper, sale.pk, wait_cookie(sale.pk))
    )
    expected = call(django, env)
    call(fast, env)  # the first is Django's, its headers learnt
    with answered_below_django(fast, expected=True):
        got = call(fast, env)
    assert got == expected
    assert b'"state": "waiting"' in got[2] and b'"position": 6' in got[2]


def test_the_fast_path_leaves_an_admitted_shoppers_status_to_django_for_the_pass(apps, shopper):
    django, fast = apps
    sale = _sale_in_a_crowd(ahead=0, admit_per_minute=0)
    shopper.get(f"/waiting-room/{sale.pk}/status")
    env = environ(
        "GET", f"/waiting-room/{sale.pk}/status", HTTP_COOKIE=_cookies(shopper, sale.pk, wait_cookie(sale.pk))
    )
    call(fast, env)
    with answered_below_django(fast, expected=False):
        call(fast, env)


def test_a_pass_that_has_ended_is_not_handed_out_again(shopper):
    sale = _sale_in_a_crowd(ahead=0, admit_per_minute=0)
    place(sale.pk, shopper.user.pk)
    redis_client().zadd(keys.admitted_log(sale.pk), {str(shopper.user.pk): time.time() - 700})
    status = shopper.get(f"/waiting-room/{sale.pk}/status")
    assert status.json()["data"]["state"] == "expired" and pass_cookie(sale.pk) not in status.cookies
    assert shopper.get("/seckill/verifyCode", {"goodsId": sale.pk}, **JSON).json()["code"] == CODE


def test_an_api_client_with_a_token_waits_its_turn_and_then_buys(django_user_model):
    """A token carries no session, so no pass cookie: asking again once its place is admitted
    lets it in (the pass taken then, logged), and not before."""
    from testutils.clients import api
    from users.tokens import api_token_issue

    user = django_user_model.objects.create_user(mobile="13800007777", password="x-password-1")
    client = api(api_token_issue(user_id=user.pk))
    sale = _sale_in_a_crowd(ahead=1)
    waiting = client.get(f"/api/v1/sales/{sale.pk}/captcha")
    assert waiting.json()["code"] == CODE and waiting.json()["data"]["position"] == 2
    room_write(sale.pk, Room(on=True, starts_at=int(time.time()) - 5, pass_seconds=600, admit_per_minute=0))
    assert client.get(f"/api/v1/sales/{sale.pk}/captcha").status_code == 200
    assert redis_client().zscore(keys.admitted_log(sale.pk), user.pk) is not None
    path = path_for(user.pk, sale.pk)
    assert client.post(f"/api/v1/sales/{sale.pk}/buy/{path}").json()["code"] == 0
