"""deploy/edge-pass.vcl in a real varnishd (tools/edge.py, answers on) in front of the real shop
under gunicorn, on the tests' Redis: while a sale's waiting room is on, its buy, captcha and path
reach the shop only with a pass that waitingroom.passes.pass_read would take, and never while the
room queues everyone; the others are answered "in the waiting room" by the edge, counted by the
edge's own backend requests. A room that is off, or Redis out of reach, passes everything."""

import json
import re
import time

import pytest
import requests
from django.http.cookie import parse_cookie

from lab.shopper import session_create
from seckill_site.redis import client as redis
from seckill_site.redis.keys import PREFIX
from testutils.factories.sales import make_sale
from testutils.factories.users import make_user
from testutils.processes import gunicorn_running
from tools.edge import ROOT, edge_counters, edge_down, edge_up, varnish_available
from tools.edge_answers import answers_files, waiting_code
from tools.missing import missing
from tools.net import wait_until
from users.tokens import api_token_issue
from waitingroom import keys
from waitingroom.passes import pass_cookie, pass_key, pass_read, pass_signed
from waitingroom.room import Room, room_write, shop_switches_write

pytestmark = [
    pytest.mark.processes,
    pytest.mark.django_db(transaction=True),
    pytest.mark.skipif(
        not varnish_available(),
        reason=missing("varnishd is not installed: the edge tests did not run", "varnish", "varnish-vmod-digest"),
    ),
]

PASS_SECONDS = 60
# The sale's per-shopper requests the edge reads the sale of: (method, path, whether the API's).
REQUESTS = {
    "API buy": ("POST", "/api/v1/sales/{sale}/buy/not-a-path", True),
    "API path": ("POST", "/api/v1/sales/{sale}/path", True),
    "API captcha": ("GET", "/api/v1/sales/{sale}/captcha", True),
    "API spoken captcha": ("GET", "/api/v1/sales/{sale}/captcha/audio", True),
    "page captcha": ("GET", "/seckill/verifyCode?goodsId={sale}&t=1764000000000", False),
    "page spoken captcha": ("GET", "/seckill/verifyAudio?goodsId={sale}&t=1", False),
    "page path": ("GET", "/seckill/path?goodsId={sale}&verifyCode=12", False),
}
JSON = "application/json"
BROWSER = "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8"


@pytest.fixture(scope="module")
def shop(django_db_setup, django_db_blocker, tmp_path_factory):
    with gunicorn_running() as url:
        directory = tmp_path_factory.mktemp("edge")
        edge = edge_up(directory, url.removeprefix("http://"), answers=True)
        try:
            yield url, edge, directory
        finally:
            edge_down(directory)


def room_on(sale_id: int, **switches: bool) -> None:
    room_write(sale_id, Room(on=True, admit_per_minute=60, pass_seconds=PASS_SECONDS, **switches))


def shopper(sale_id: int, **signed) -> tuple[str, str]:
    """(session key, pass for `sale_id`) of a logged-in shopper admitted now (or as `signed`)."""
    user = make_user()
    session = session_create(user)
    return session, pass_signed(user_id=user.pk, sale_id=sale_id, session_key=session, **signed)


def cookies(sale_id: int, session: str | None, value: str | None, language: str | None = None) -> str:
    named = {"sessionid": session, pass_cookie(sale_id): value, "django_language": language}
    return "; ".join(f"{name}={value}" for name, value in named.items() if value is not None)


def ask(base: str, kind: str, sale_id: int, cookie: str, accept: str = JSON) -> requests.Response:
    method, path, _api = REQUESTS[kind]
    return requests.request(method, base + path.format(sale=sale_id), headers={"Cookie": cookie, "Accept": accept},
                            allow_redirects=False, timeout=10)  # fmt: skip


def by_shop(response: requests.Response) -> bool:
    """Only the shop's answer carries a Server header (gunicorn names itself; the edge's own has none)."""
    return "server" in response.headers


def backend_requests(directory) -> int:
    return edge_counters(directory).get("MAIN.backend_req", 0)


def reached_once_more(directory, before: int) -> bool:
    """Whether the edge's backend requests went from `before` to exactly one more (the counters
    are summed from its threads a moment after a request ends)."""
    wait_until(lambda: backend_requests(directory) > before, 5)
    time.sleep(0.2)
    return backend_requests(directory) == before + 1


def waiting(response: requests.Response, sale_id: int, *, url: str, status: int = 429) -> None:
    """`response` is the edge's "in the waiting room" for `sale_id`, naming `url`'s page: 429 to
    the API and a page's scripts, 503 to any other client."""
    assert not by_shop(response) and response.status_code == status, response.text
    assert response.headers["Retry-After"] == "5" and response.headers["Cache-Control"] == "private, no-store"
    assert response.headers["Content-Type"] == JSON
    assert response.json()["code"] == waiting_code().code
    assert response.json()["data"] == {"position": None, "aheadOfYou": None, "etaSeconds": None, "waitingRoomUrl": url}


def test_without_a_pass_no_request_of_the_sale_reaches_the_shop(shop):
    _url, edge, directory = shop
    sale = make_sale(stock=5)
    room_on(sale.pk)
    session, _pass = shopper(sale.pk)
    before = backend_requests(directory)
    for kind, (_method, _path, api) in REQUESTS.items():
        for accept in (JSON, "*/*", BROWSER):
            response = ask(edge, kind, sale.pk, cookies(sale.pk, session, None), accept)
            if api or accept != BROWSER:
                waiting(response, sale.pk, url=f"/waiting-room/{sale.pk}", status=429 if api or accept == JSON else 503)
            else:  # a browser's page: sent to the waiting room's page
                assert (response.status_code, response.headers["Location"]) == (303, f"/waiting-room/{sale.pk}")
                assert not by_shop(response) and response.content == b""
        # In the shopper's language, the waiting room's page in it.
        response = ask(edge, kind, sale.pk, cookies(sale.pk, session, None, "zh-hans"))
        waiting(response, sale.pk, url=f"/zh-hans/waiting-room/{sale.pk}")
        assert response.headers["Content-Language"] == "zh-hans"
        assert "\\u7b49\\u5019" in response.text  # 等候, in the envelope's escaped JSON
    # Nothing reached the shop: one request that does is the only one counted.
    response = ask(edge, "API buy", sale.pk, cookies(sale.pk, session, _pass))
    assert by_shop(response) and reached_once_more(directory, before)


def test_a_valid_pass_passes_each_request_to_the_shop_unchanged(shop):
    url, edge, directory = shop
    sale = make_sale(stock=5)
    room_on(sale.pk)
    for kind in REQUESTS:
        session, value = shopper(sale.pk)
        before = backend_requests(directory)
        through = ask(edge, kind, sale.pk, cookies(sale.pk, session, value))
        assert by_shop(through) and reached_once_more(directory, before), kind
        direct = ask(url, kind, sale.pk, cookies(sale.pk, session, value))
        assert (through.status_code, through.headers["Content-Type"]) == (
            direct.status_code,
            direct.headers["Content-Type"],
        ), kind


def test_a_pass_that_does_not_hold_for_this_request_is_refused_at_the_edge(shop):
    _url, edge, _directory = shop
    sale, other_sale = make_sale(stock=5), make_sale(stock=5)
    room_on(sale.pk)
    room_on(other_sale.pk)
    session, value = shopper(sale.pk)
    other_session, _other = shopper(sale.pk)
    signed, _sep, signature = value.rpartition(":")
    user_id = int(value.split(".")[0])
    now = int(time.time())
    refused = {
        "expired": (session, shopper_pass(user_id, sale.pk, session, signed_at=now - PASS_SECONDS - 5)),
        "signed ahead of the clock": (session, shopper_pass(user_id, sale.pk, session, signed_at=now + 30)),
        "another session's cookie": (other_session, value),
        "no session cookie": (None, value),
        "for another sale": (session, shopper_pass(user_id, other_sale.pk, session)),
        "forged": (session, f"{signed}:{signature[:-1]}{'0' if signature[-1] != '0' else '1'}"),
        "signed with another key": (session, re.sub(r":[0-9a-f]{64}$", ":" + "ab" * 32, value)),
    }
    for name, (session_key, cookie_value) in refused.items():
        response = ask(edge, "API buy", sale.pk, cookies(sale.pk, session_key, cookie_value))
        assert not by_shop(response), name
        waiting(response, sale.pk, url=f"/waiting-room/{sale.pk}")
    # Its own sale's pass under another sale's cookie is no pass for that one either.
    other = ask(edge, "API buy", other_sale.pk, cookies(sale.pk, session, value))
    waiting(other, other_sale.pk, url=f"/waiting-room/{other_sale.pk}")


def shopper_pass(user_id: int, sale_id: int, session: str, **signed) -> str:
    return pass_signed(user_id=user_id, sale_id=sale_id, session_key=session, **signed)


@pytest.mark.parametrize("switch", ["the sale's", "the shop's"])
def test_queue_everyone_refuses_even_a_valid_pass(shop, switch):
    _url, edge, _directory = shop
    sale = make_sale(stock=5)
    room_on(sale.pk)
    session, value = shopper(sale.pk)
    assert by_shop(ask(edge, "API buy", sale.pk, cookies(sale.pk, session, value)))
    if switch == "the sale's":
        room_on(sale.pk, queue_all=True)
    else:
        shop_switches_write(queue_all=True, stop=False)
    for kind in ("API buy", "page captcha"):
        waiting(ask(edge, kind, sale.pk, cookies(sale.pk, session, value)), sale.pk, url=f"/waiting-room/{sale.pk}")
    # Thrown back, the same pass passes again: nothing was kept.
    shop_switches_write(queue_all=False, stop=False)
    room_on(sale.pk)
    assert by_shop(ask(edge, "API buy", sale.pk, cookies(sale.pk, session, value)))


def test_an_api_token_passes_for_the_shop_to_decide_unless_everyone_is_queued(shop):
    """A token client carries no session to bind a pass to: the shop admits it by its place in
    line, which only Django resolves the token to, so the edge lets it through while the room
    admits; while the operator queues everyone nobody passes, and the edge says so itself."""
    _url, edge, directory = shop
    sale = make_sale(stock=5)
    room_on(sale.pk)
    user = make_user()
    token = {"Authorization": f"Token {api_token_issue(user_id=user.pk)}", "Accept": JSON}
    captcha = edge + REQUESTS["API captcha"][1].format(sale=sale.pk)
    before = backend_requests(directory)
    admitted = requests.get(captcha, headers=token, allow_redirects=False, timeout=10)
    assert by_shop(admitted) and reached_once_more(directory, before)
    assert (admitted.status_code, admitted.headers["Content-Type"]) == (200, "image/png")
    room_on(sale.pk, queue_all=True)
    waiting(requests.get(captcha, headers=token, allow_redirects=False, timeout=10), sale.pk,
            url=f"/waiting-room/{sale.pk}")  # fmt: skip


def test_a_sale_whose_room_is_off_passes_every_request_untouched(shop):
    url, edge, directory = shop
    sale = make_sale(stock=5)
    session, _value = shopper(sale.pk)
    redis().hset(keys.room(sale.pk), mapping={"on": 0, "pass_seconds": PASS_SECONDS})  # set, and off
    shop_switches_write(queue_all=True, stop=False)  # the shop's switch is for the rooms that are on
    for kind in REQUESTS:
        before = backend_requests(directory)
        through = ask(edge, kind, sale.pk, cookies(sale.pk, session, None))
        assert by_shop(through) and reached_once_more(directory, before), kind
        assert through.status_code == ask(url, kind, sale.pk, cookies(sale.pk, session, None)).status_code, kind


def test_the_sale_is_read_as_django_reads_it(shop):
    """An id with leading zeros, or the last of two `goodsId`s, is the sale Django would serve."""
    _url, edge, _directory = shop
    sale, open_sale = make_sale(stock=5), make_sale(stock=5)
    room_on(sale.pk)
    session, _value = shopper(sale.pk)
    cookie = cookies(sale.pk, session, None)
    headers = {"Cookie": cookie, "Accept": JSON}
    for path in (
        f"/api/v1/sales/000{sale.pk}/captcha",
        f"/seckill/verifyCode?t=1&goodsId={sale.pk}",
        f"/seckill/verifyCode?goodsId={open_sale.pk}&goodsId={sale.pk}",
    ):
        assert not by_shop(requests.get(edge + path, headers=headers, timeout=10)), path
    for path in (
        f"/seckill/verifyCode?goodsId={sale.pk}&goodsId={open_sale.pk}",  # Django serves the open sale
        f"/seckill/verifyCode?goodsId={sale.pk}&goodsId=x",  # and refuses this one itself (400)
        f"/api/v1/sales/{sale.pk}/result",  # a shopper's result is theirs to read, pass or not
    ):
        assert by_shop(requests.get(edge + path, headers=headers, timeout=10)), path


def test_an_edge_that_cannot_reach_redis_passes_everything(shop, tmp_path):
    url, _edge, _directory = shop
    sale = make_sale(stock=5)
    room_on(sale.pk, queue_all=True)
    session, value = shopper(sale.pk)
    answers_files(tmp_path)
    config = tmp_path / "edge-answers-config.vcl"
    config.write_text(re.sub(r'location="[^"]+"', 'location="127.0.0.1:1"', config.read_text()))
    blind = edge_up(tmp_path, url.removeprefix("http://"), answers=None)
    try:
        for kind in REQUESTS:
            assert by_shop(ask(blind, kind, sale.pk, cookies(sale.pk, session, None))), kind
            assert by_shop(ask(blind, kind, sale.pk, cookies(sale.pk, session, value), BROWSER)), kind
    finally:
        edge_down(tmp_path)


def test_the_edge_and_pass_read_agree(shop):
    """A table of passes and cookies, each asked of the edge and of pass_read (fed the cookies as
    Django parses them): the edge lets through exactly the requests pass_read takes. The passes'
    ages stay clear of the life's last second, where the edge, counting whole seconds, may still
    take one pass_read has just refused (never the other way)."""
    _url, edge, _directory = shop
    sale, other_sale = make_sale(stock=5), make_sale(stock=5)
    room_on(sale.pk)
    s, o = sale.pk, other_sale.pk
    session, value = shopper(s)
    other_session, other_value = shopper(s)
    user = int(value.split(".")[0])
    now = int(time.time())
    key_name = pass_cookie(s)

    def signed_at(at: int) -> str:
        return cookies(s, session, shopper_pass(user, s, session, signed_at=at))

    table = {
        "good": cookies(s, session, value),
        "good, quoted": f'sessionid={session}; {key_name}="{value}"',
        "good, among other cookies": f"csrftoken=x; {key_name}={value};sessionid={session}; {pass_cookie(o)}=1",
        "good, another shopper's": cookies(s, other_session, other_value),
        "signed 20 s ago": cookies(s, session, shopper_pass(user, s, session, signed_at=now - 20)),
        "signed 2 s before its end": cookies(
            s, session, shopper_pass(user, s, session, signed_at=now - PASS_SECONDS + 2)
        ),
        "signed 3 s past its end": cookies(
            s, session, shopper_pass(user, s, session, signed_at=now - PASS_SECONDS - 3)
        ),
        "signed in 20 s": cookies(s, session, shopper_pass(user, s, session, signed_at=now + 20)),
        "for another sale": cookies(s, session, shopper_pass(user, o, session)),
        "under another sale's name": f"sessionid={session}; {pass_cookie(o)}={value}",
        "under a longer name": f"sessionid={session}; {key_name}0={value}",
        "another session": cookies(s, other_session, value),
        "no session": cookies(s, None, value),
        "an empty session": cookies(s, "", value),
        "no pass": cookies(s, session, None),
        "an empty pass": cookies(s, session, ""),
        "a bad signature": cookies(s, session, value[:-1] + ("0" if value[-1] != "0" else "1")),
        "upper-case hex": cookies(s, session, value[:-64] + value[-64:].upper()),
        "a leading zero": cookies(s, session, "0" + value),
        "cut short": cookies(s, session, value[:-1]),
        "two passes, the good one last": f"sessionid={session}; {key_name}={other_value}; {key_name}={value}",
        "two passes, the good one first": f"sessionid={session}; {key_name}={value}; {key_name}={other_value}",
        "two sessions, its own last": f"sessionid={other_session}; {key_name}={value}; sessionid={session}",
        "two sessions, its own first": f"sessionid={session}; {key_name}={value}; sessionid={other_session}",
    }
    assert len(pass_key()) == 64
    disagree = {}
    for name, cookie in table.items():
        parsed = parse_cookie(cookie)
        python = pass_read(parsed.get(key_name), sale_id=s, session_key=parsed.get("sessionid"), seconds=PASS_SECONDS)
        passed = by_shop(ask(edge, "API captcha", s, cookie))
        if passed != (python is not None):
            disagree[name] = {"edge passes": passed, "pass_read": python}
    assert not disagree, json.dumps(disagree, default=str)
    # The table holds both answers.
    assert by_shop(ask(edge, "API captcha", s, table["good"]))
    assert not by_shop(ask(edge, "API captcha", s, table["no pass"]))


def test_a_pass_signed_under_the_first_fallback_key_passes_after_a_rotation(shop, tmp_path, settings):
    """The edge is given the first fallback's pass key too: a rotation of SECRET_KEY during a
    sale does not send every admitted shopper back to the queue. An older fallback's pass is
    refused at the edge, though pass_read takes it (docs/waiting-room.md)."""
    url, _edge, _directory = shop
    sale = make_sale(stock=5)
    room_on(sale.pk)
    current, old, older = settings.SECRET_KEY, "an-old-key-" + "o" * 40, "an-older-key-" + "p" * 40
    signed = {}
    for name, key in (("old", old), ("older", older)):
        settings.SECRET_KEY = key
        signed[name] = shopper(sale.pk)
    settings.SECRET_KEY, settings.SECRET_KEY_FALLBACKS = current, [old, older]
    answers_files(tmp_path)
    rotated = edge_up(tmp_path, url.removeprefix("http://"), answers=None)
    try:
        session, value = signed["old"]
        assert by_shop(ask(rotated, "API buy", sale.pk, cookies(sale.pk, session, value)))
        session, value = signed["older"]
        assert pass_read(value, sale_id=sale.pk, session_key=session, seconds=PASS_SECONDS) is not None
        assert not by_shop(ask(rotated, "API buy", sale.pk, cookies(sale.pk, session, value)))
    finally:
        edge_down(tmp_path)


def test_deploys_own_files_check_no_pass_even_with_redis_at_hand(shop, tmp_path):
    url, _edge, directory = shop
    sale = make_sale(stock=5)
    session, _value = shopper(sale.pk)
    deploys = (ROOT / "deploy" / "edge-answers-config.vcl").read_text()
    location = re.search(r'location="[^"]+"', (directory / "edge-answers-config.vcl").read_text())
    assert location is not None
    (tmp_path / "edge-answers-config.vcl").write_text(re.sub(r'location="[^"]+"', location.group(0), deploys))
    (tmp_path / "edge-secrets.vcl").write_text((ROOT / "deploy" / "edge-secrets.vcl").read_text())
    # Deploy's names carry no test prefix: the room as production's key would read.
    unprefixed = keys.room(sale.pk).removeprefix(PREFIX)
    redis().hset(unprefixed, mapping={"on": 1, "pass_seconds": PASS_SECONDS, "queue_all": 1})
    plain = edge_up(tmp_path, url.removeprefix("http://"), answers=None)
    try:
        for kind in REQUESTS:
            assert by_shop(ask(plain, kind, sale.pk, cookies(sale.pk, session, None))), kind
    finally:
        redis().delete(unprefixed)
        edge_down(tmp_path)


@pytest.mark.parametrize("path", ["/waiting-room/{sale}/status", "/seckill/waitingList/{sale}"])
def test_a_shoppers_own_wait_polls_pass_to_the_shop_every_time(shop, path):
    """The waiting room's status and a draw's waiting list are each shopper's own: the edge
    neither answers nor keeps them, so each poll reaches the shop (whose fast path answers it
    from Redis) with the shopper's cookies."""
    url, edge, directory = shop
    sale = make_sale(stock=5)
    room_on(sale.pk)
    session, _value = shopper(sale.pk)
    headers = {"Cookie": cookies(sale.pk, session, None), "Accept": JSON}
    for _poll in range(2):
        before = backend_requests(directory)
        through = requests.get(edge + path.format(sale=sale.pk), headers=headers, timeout=10)
        assert by_shop(through) and reached_once_more(directory, before), path
        direct = requests.get(url + path.format(sale=sale.pk), headers=headers, timeout=10)
        assert (through.status_code, through.json()["code"]) == (direct.status_code, direct.json()["code"]), path
