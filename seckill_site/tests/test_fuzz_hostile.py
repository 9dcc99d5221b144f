"""Every API operation in the OpenAPI schema and every HTML form the pages serve, fed the
inputs that used to reach a 500: stale and deactivated sessions, revoked and expired tokens,
deep and huge JSON bodies, Unicode digits, integers at and past every column's bounds, and
images that are bombs, too big, garbage or polyglots; and every endpoint that takes `next`,
fed redirect targets (bare words, URL names, schemes, backslashes, encodings, Unicode). Never
a 5xx, and no redirect off the host. The per-endpoint tally is
printed at the end of the run (testutils.fuzzing)."""

import html
import itertools
import json
import re
from datetime import timedelta
from html.parser import HTMLParser
from urllib.parse import urlencode, urlsplit

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client
from django.utils import timezone
from drf_spectacular.generators import SchemaGenerator
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from rest_framework.authtoken.models import Token

from seckill_site.api import JSON_MAX_BYTES
from testutils.factories.goods import make_goods
from testutils.factories.orders import buy
from testutils.factories.sales import make_sale
from testutils.factories.users import PASSWORD, make_address, make_merchant, make_user
from testutils.fuzzing import (
    BOUNDARY_INTEGERS,
    ODD_NUMBER_TEXT,
    REDIRECT_TARGETS,
    UNICODE_DIGITS,
    UPLOADS,
    deep_json,
    hostile_next,
    hostile_scalar,
    hostile_value,
    record,
)
from users.models import User
from users.tokens import TOKEN_LIFETIME, api_token_issue

# Fuzzing and sweeps: a minute of CPU. `make test` runs them; `make test-fast` leaves `slow` out.
pytestmark = [pytest.mark.django_db, pytest.mark.slow]
EXAMPLES = 14
FUZZ = settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=list(HealthCheck), derandomize=True)
_addresses = itertools.count(1)

SCHEMA = SchemaGenerator().get_schema(request=None, public=True)
OPERATIONS = [
    (method.upper(), path, operation)
    for path, item in SCHEMA["paths"].items()
    for method, operation in item.items()
    if method in ("get", "post", "put", "patch", "delete")
]
CREDENTIALS = ["superuser-token", "shopper-session", "stale-session", "deactivated-session", "deactivated-token",
               "expired-token", "garbage-token", "none"]  # fmt: skip


@pytest.fixture
def world(django_capture_on_commit_callbacks):
    """Users in every state a request can arrive in, and real rows to aim at."""
    superuser = User.objects.create_superuser(mobile="13999999999", password=PASSWORD)
    shopper, stale, deactivated, expired = make_user(), make_user(), make_user(), make_user()
    sale = make_sale(goods=make_goods(owner=superuser), stock=50)
    order = buy(sale=sale, user=shopper)
    address = make_address(shopper)  # the order page then offers the pay form, with its address choice
    sessions = {}
    for name, user in (("shopper-session", shopper), ("stale-session", stale), ("deactivated-session", deactivated)):
        browser = Client()
        browser.force_login(user)
        sessions[name] = browser.cookies["sessionid"].value
    tokens = {"deactivated-token": api_token_issue(user_id=deactivated.pk), "expired-token": api_token_issue(
        user_id=expired.pk)}  # fmt: skip
    Token.objects.filter(user=expired).update(created=timezone.now() - timedelta(seconds=TOKEN_LIFETIME + 1))
    from seckill_site.redis import client
    from users.tokens import _token_cache_key

    client().delete(_token_cache_key(tokens["expired-token"]))
    with django_capture_on_commit_callbacks(execute=True):
        stale.set_password("changed-pass-4")
        stale.save()
        deactivated.is_active = False
        deactivated.save()
    return {"superuser": superuser, "sale": sale, "order": order, "sessions": sessions, "tokens": tokens,
            "merchant": make_merchant(), "shopper": shopper, "address": address}  # fmt: skip


def _client(world, credentials: str) -> tuple[Client, dict]:
    browser, headers = Client(raise_request_exception=False), {"REMOTE_ADDR": f"10.{next(_addresses) % 250}.0.1"}
    if credentials in world["sessions"]:
        browser.cookies["sessionid"] = world["sessions"][credentials]
    elif credentials == "superuser-token":
        headers["HTTP_AUTHORIZATION"] = f"Token {api_token_issue(user_id=world['superuser'].pk)}"
    elif credentials in world["tokens"]:
        headers["HTTP_AUTHORIZATION"] = f"Token {world['tokens'][credentials]}"
    elif credentials == "garbage-token":
        # As WSGI hands a header over: its UTF-8 bytes read as latin-1.
        headers["HTTP_AUTHORIZATION"] = "Token ١٢٣٤".encode().decode("latin-1")
    return browser, headers


def _path_value(world, name: str):
    real = {"sale_id": world["sale"].pk, "goods_id": world["sale"].goods_id, "order_no": world["order"].order_no}
    return st.one_of(st.just(real.get(name, "abc")), hostile_scalar.map(str)).map(
        lambda value: str(value).replace("/", "_").replace("?", "_").replace("#", "_")[:300] or "x"
    )


def _body(operation: dict):
    content = (operation.get("requestBody") or {}).get("content", {}).get("application/json")
    if content is None:
        return st.none()
    schema = content["schema"]
    if "$ref" in schema:
        schema = SCHEMA["components"]["schemas"][schema["$ref"].split("/")[-1]]
    fields = st.fixed_dictionaries({}, optional={name: hostile_value for name in schema.get("properties", {})})
    return st.one_of(
        fields.map(json.dumps),
        hostile_value.map(json.dumps),
        st.sampled_from([deep_json(200_000), deep_json(33), '{"a": ' + deep_json(5_000) + "}"]),
        st.just(json.dumps({"x": "9" * (JSON_MAX_BYTES + 1)})),
        st.binary(max_size=64),
    )


@pytest.mark.parametrize("method, path, operation", OPERATIONS, ids=[f"{m} {p}" for m, p, _o in OPERATIONS])
def test_every_api_operation_survives_hostile_input(world, method, path, operation):
    parameters = [p["name"] for p in operation.get("parameters", []) if p["in"] == "path"]
    queries = [p["name"] for p in operation.get("parameters", []) if p["in"] == "query"]

    @FUZZ
    @given(
        credentials=st.sampled_from(CREDENTIALS),
        values=st.fixed_dictionaries({name: _path_value(world, name) for name in parameters}),
        query=st.fixed_dictionaries({}, optional={name: hostile_scalar.map(str) for name in queries}),
        body=_body(operation),
    )
    def run(credentials, values, query, body):
        browser, headers = _client(world, credentials)
        url = path
        for name, value in values.items():
            url = url.replace("{" + name + "}", value)
        if query:
            headers["QUERY_STRING"] = urlencode(query)  # as a client sends it: percent-encoded
        data = body if body is not None else ""
        response = browser.generic(method, url, data, content_type="application/json", **headers)
        record(f"{method} {path}", response.status_code)
        assert response.status_code < 500, (method, url, credentials, response.content[:300])
        if response.status_code >= 400 and response.get("Content-Type", "").startswith("application/json"):
            assert response.json()["code"] != 0 and response.json()["msg"]

    run()


# Random draws rarely put one particular value in one particular field; these do, for every
# field: each body property of each operation, and each field of each form, gets each of them.
NUMBER_MATRIX = [*UNICODE_DIGITS, *ODD_NUMBER_TEXT, *BOUNDARY_INTEGERS, *(str(n) for n in BOUNDARY_INTEGERS)]
FORM_MATRIX = ["--5", "²", "١٢٣", "１２３", str(2**31), str(-(2**63) - 1), "1e400", "9" * 5000]


@pytest.mark.parametrize(
    "method, path, operation",
    [op for op in OPERATIONS if "requestBody" in op[2]],
    ids=[f"{m} {p}" for m, p, o in OPERATIONS if "requestBody" in o],
)
def test_every_body_field_takes_every_hostile_number(world, method, path, operation):
    schema = operation["requestBody"]["content"]["application/json"]["schema"]
    if "$ref" in schema:
        schema = SCHEMA["components"]["schemas"][schema["$ref"].split("/")[-1]]
    real = {"sale_id": world["sale"].pk, "goods_id": world["sale"].goods_id, "order_no": world["order"].order_no}
    url = path
    for name, value in real.items():
        url = url.replace("{" + name + "}", str(value))
    url = url.replace("{path}", "abc")
    for field in schema.get("properties", {}):
        for value in NUMBER_MATRIX:
            browser, headers = _client(world, "superuser-token")
            response = browser.generic(
                method, url, json.dumps({field: value}), content_type="application/json", **headers
            )
            record(f"{method} {path}", response.status_code)
            assert response.status_code < 500, (method, url, field, value, response.content[:300])


# --- the HTML forms ---------------------------------------------------------------------------


class _Forms(HTMLParser):
    """The forms of a page: action, method and fields (name -> type, value)."""

    def __init__(self):
        super().__init__()
        self.forms: list[dict] = []

    def handle_starttag(self, tag, attrs):
        attributes = dict(attrs)
        if tag == "form":
            self.forms.append({"action": attributes.get("action") or "", "method": (attributes.get(
                "method") or "get").lower(), "fields": {}})  # fmt: skip
        elif tag in ("input", "select", "textarea") and self.forms and attributes.get("name"):
            kind = attributes.get("type", tag)
            if kind in ("submit", "button", "image", "reset"):
                return
            self.forms[-1]["fields"][attributes["name"]] = (kind, attributes.get("value") or "")


PAGES = [
    ("anonymous", "/user/index"),
    ("anonymous", "/user/register"),
    ("anonymous", "/admin/login/"),
    ("merchant", "/admin/goods/goods/add/"),
    ("merchant", "/admin/sales/sale/add/"),
    ("superuser", "/admin/sales/sale/{sale}/change/"),
    ("superuser", "/admin/goods/goods/{goods}/change/"),
    ("superuser", "/admin/users/user/add/"),
    ("superuser", "/admin/users/user/{shopper}/change/"),
    ("shopper", "/orders/{order}"),
    ("shopper", "/user/addresses"),
    ("shopper", "/user/addresses/{address}"),
]


def _logged_in(world, who: str) -> Client:
    browser = Client(raise_request_exception=False)
    user = {"merchant": world["merchant"], "superuser": world["superuser"], "shopper": world["shopper"]}.get(who)
    if user is not None:
        browser.force_login(user)
    return browser


def _field_value(kind: str):
    if kind == "file":
        return st.sampled_from(sorted(UPLOADS)).map(
            lambda name: SimpleUploadedFile(f"{name}.png", UPLOADS[name], content_type="image/png")
        )
    return hostile_scalar.map(lambda value: "" if value is None else str(value))


@pytest.mark.parametrize("who, page", PAGES, ids=[page for _who, page in PAGES])
def test_every_form_survives_hostile_input(world, who, page):
    url = page.format(sale=world["sale"].pk, goods=world["sale"].goods_id, shopper=world["shopper"].pk,
                      order=world["order"].order_no, address=world["address"].pk)  # fmt: skip
    loaded = _logged_in(world, who).get(url)
    assert loaded.status_code == 200, (url, loaded.status_code)
    parser = _Forms()
    parser.feed(loaded.content.decode())
    forms = [form for form in parser.forms if form["method"] == "post"]
    assert forms, f"no form on {url}"

    @FUZZ
    @given(
        form=st.sampled_from(forms),
        session=st.sampled_from(["own", "stale-session", "deactivated-session", "none"]),
        data=st.data(),
    )
    def run(form, session, data):
        browser = _logged_in(world, who) if session == "own" else Client(raise_request_exception=False)
        if session in world["sessions"]:
            browser.cookies["sessionid"] = world["sessions"][session]
        values = {}
        for name, (kind, value) in form["fields"].items():
            keep = name == "csrfmiddlewaretoken" or data.draw(st.booleans(), label=f"keep {name}")
            values[name] = value if keep and kind != "file" else data.draw(_field_value(kind), label=name)
        action = form["action"] or url
        response = browser.post(action, values, REMOTE_ADDR=f"10.{next(_addresses) % 250}.1.1")
        record(f"form {page}", response.status_code)
        assert response.status_code < 500, (action, session, response.content[:300])

    run()
    # Then every field of every form gets each number-like value the random draws may miss.
    for form in forms:
        as_served = {field: value for field, (kind, value) in form["fields"].items() if kind != "file"}
        for name, (kind, _value) in form["fields"].items():
            if kind in ("file", "hidden"):
                continue
            for hostile in FORM_MATRIX:
                values = {**as_served, name: hostile}
                response = _logged_in(world, who).post(form["action"] or url, values, REMOTE_ADDR="10.250.2.1")
                record(f"form {page}", response.status_code)
                assert response.status_code < 500, (url, name, hostile, response.content[:300])


# --- redirect targets ---------------------------------------------------------------------------


def _stays_on_this_host(location: str) -> bool:
    """A Location a browser resolves on this host: no scheme or host of its own (backslashes
    read as slashes, as Chrome does), nothing unprintable, or an absolute URL of this host."""
    parts = urlsplit(location.replace("\\", "/"))
    if parts.scheme or parts.netloc:
        return parts.scheme in ("http", "https") and parts.netloc == "testserver"
    return location.isprintable() and not location.startswith("//")


def _next_requests(world, target: str) -> list[tuple[str, Client, str, dict]]:
    """Every endpoint that takes `next`, asked with `target`: (name, client, method, kwargs)."""
    shopper, superuser = world["shopper"], world["superuser"]
    logged_in, admin = _logged_in(world, "shopper"), _logged_in(world, "superuser")
    anonymous = Client(raise_request_exception=False)
    ip = {"REMOTE_ADDR": f"10.{next(_addresses) % 250}.3.1"}
    return [
        ("GET /language", anonymous, "get", {"path": "/language", "data": {"language": "zh-hans", "next": target}}),
        ("GET /user/index", anonymous, "get", {"path": "/user/index", "data": {"next": target}}),
        ("GET /user/register", anonymous, "get", {"path": "/user/register", "data": {"next": target}}),
        ("GET /user/login/code", anonymous, "get", {"path": "/user/login/code", "data": {"next": target}}),
        ("POST /user/login", Client(raise_request_exception=False), "post", {"path": "/user/login", "data": {
            "mobile": shopper.mobile, "password": PASSWORD, "next": target}, **ip}),
        ("POST /user/login wrong", anonymous, "post", {"path": "/user/login", "data": {
            "mobile": shopper.mobile, "password": "wrong-one", "next": target}, **ip}),
        ("POST /user/login/code", anonymous, "post", {"path": "/user/login/code", "data": {
            "mobile": shopper.mobile, "code": "000000", "next": target}, **ip}),
        ("POST /user/register", anonymous, "post", {"path": "/user/register", "data": {
            "mobile": "1370000", "password": "x", "next": target}, **ip}),
        ("POST /user/logout", logged_in, "post", {"path": "/user/logout", "data": {"next": target}}),
        ("GET /admin/login/", anonymous, "get", {"path": "/admin/login/", "data": {"next": target}}),
        ("POST /admin/login/", Client(raise_request_exception=False), "post", {"path": "/admin/login/", "data": {
            "username": superuser.mobile, "password": PASSWORD, "next": target}, **ip}),
        ("POST /admin/logout/", admin, "post", {"path": "/admin/logout/", "data": {"next": target}}),
        ("GET /orders/ anonymous", anonymous, "get", {"path": "/orders/", "data": {"next": target}}),
    ]  # fmt: skip


def _check_next(name: str, target: str, response) -> None:
    record(f"next {name}", response.status_code)
    assert response.status_code < 500, (name, target, response.content[:300])
    location = response.get("Location")
    if location is not None:
        assert _stays_on_this_host(location), (name, target, location)
    # Pages carry only a checked `next` on to their form.
    if response.get("Content-Type", "").startswith("text/html"):
        for kept in re.findall(r'name="next" value="([^"]*)"', response.content.decode()):
            assert _stays_on_this_host(html.unescape(kept)), (name, target, kept)


@pytest.mark.parametrize("target", REDIRECT_TARGETS, ids=[repr(t)[:40] for t in REDIRECT_TARGETS])
def test_every_next_takes_every_hostile_redirect_target(world, target):
    for name, browser, method, kwargs in _next_requests(world, target):
        _check_next(name, target, getattr(browser, method)(**kwargs))


def test_every_next_survives_random_redirect_targets(world):
    @FUZZ
    @given(target=hostile_next)
    def run(target):
        for name, browser, method, kwargs in _next_requests(world, target):
            _check_next(name, target, getattr(browser, method)(**kwargs))

    run()
