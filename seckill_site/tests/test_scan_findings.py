"""What the scanners and the manual probes found on cfd07ef (issue 27), one group per finding,
through HTTP only, so each of these tests also runs, and fails, against that commit:

1. a bare word in `next` was a 500 (and the DEBUG page of one showed the password);
2. SMS sends let a stranger lock a number's owner out and told anyone who is registered;
   per-IP budgets were per address, so every IPv6 address had a fresh one; no shop-wide cap;
3. no Content-Security-Policy, HSTS claiming preload with a 30-day max-age, the language
   cookie without Secure in production;
4. /metrics trusted any loopback peer, /readyz told anyone its dependencies' error texts;
5. the captcha page's 429 had no Retry-After.
"""

import html
import json
import os
import re
import secrets
import subprocess
import sys
from urllib.parse import urlsplit

import pytest
from django.contrib.auth import SESSION_KEY
from django.test import Client

from seckill_site import health
from seckill_site.redis import client as redis
from seckill_site.redis import keys
from testutils.factories.sales import make_sale
from testutils.factories.users import PASSWORD, make_user, next_mobile
from testutils.processes import ROOT, child_database_url
from users import sms

pytestmark = pytest.mark.django_db

JSON = {"HTTP_ACCEPT": "application/json"}
# Redirect targets that must never leave the site nor be looked up as a URL name.
HOSTILE_NEXT = ["id", "login", "index", "admin:index", "users:index", "javascript:alert(1)", "//evil.example",
                "https://evil.example/", "/\\evil.example", "\\\\evil.example", "/%0d%0aSet-Cookie:x=1",
                "/\t/evil.example", "/goods\nLocation: //evil.example", "\u202e/evil",
                "ｊavascript:alert(1)"]  # fmt: skip


def _on_this_site(location: str) -> bool:
    """A path of this site, as a browser reads a Location: no scheme, no host, no backslash."""
    parts = urlsplit(location.replace("\\", "/"))
    return location.startswith("/") and not parts.scheme and not parts.netloc and location.isprintable()


def _outbox_of(mobile: str) -> list[str]:
    return [message["text"] for message in sms.outbox if message["mobile"] == mobile]


def _texted_code(client: Client, mobile: str, purpose: str, remote: str = "10.66.0.1") -> str:
    response = client.post("/user/sms/send", {"mobile": mobile, "purpose": purpose}, REMOTE_ADDR=remote)
    assert response.status_code == 200, response.content
    return re.search(r"\b(\d{6})\b", _outbox_of(mobile)[-1])[1]


def _a_minute_passes(mobile: str) -> None:
    """Drop the number's resend marks, whatever requester they belong to."""
    pattern = f"{keys.PREFIX}sms:{{{mobile}}}:resend*"
    for key in redis().scan_iter(match=pattern):
        redis().delete(key)


# --- 1. redirects ------------------------------------------------------------------------------


@pytest.mark.parametrize("target", HOSTILE_NEXT)
def test_finding1_no_next_is_a_500_or_leaves_the_site(target):
    browser = Client(raise_request_exception=False)
    answers = {
        "language": browser.get("/language", {"language": "en", "next": target}),
        "login page": browser.get("/user/index", {"next": target}),
    }
    user = make_user()
    answers["login"] = browser.post("/user/login", {"mobile": user.mobile, "password": PASSWORD, "next": target})
    assert browser.session.get(SESSION_KEY) == str(user.pk)  # logged in, not a 500 after the password
    answers["logout"] = browser.post("/user/logout", {"next": target})
    for name, response in answers.items():
        assert response.status_code < 500, (name, target, response.status_code)
        location = response.get("Location", "")
        assert location in ("", "/", "/goods/goodsList", "/user/index") or _on_this_site(location), (name, location)
    kept = html.unescape(re.search(r'name="next" value="([^"]*)"', answers["login page"].content.decode())[1])
    assert kept == "/goods/goodsList" or _on_this_site(kept), kept


def test_finding1_a_safe_next_is_kept():
    browser = Client()
    assert browser.get("/language", {"language": "en", "next": "/orders/?page=2"})["Location"] == "/orders/?page=2"
    user = make_user()
    response = browser.post("/user/login", {"mobile": user.mobile, "password": PASSWORD, "next": "/orders/"})
    assert response.status_code == 302 and response["Location"] == "/orders/"


SECRET_PASSWORD = "Sekret-Pa55-word-9"


def _register_body(client: Client, mobile: str) -> dict:
    code = _texted_code(client, mobile, "register")
    return {"mobile": mobile, "password": SECRET_PASSWORD, "password_again": SECRET_PASSWORD, "code": code}


# (path, JSON body?, what to break after the secret was read, how to make the body)
SECRET_ENDPOINTS = {
    "page login": ("/user/login", False, "users.services.login", "login"),
    "api login": ("/api/v1/users/login", True, "users.services.login", "login"),
    "page register": ("/user/register", False, "users.services.login", "register"),
    "api register": ("/api/v1/users/register", True, "users.apis.api_token_issue", "register"),
    "page code login": ("/user/login/code", False, "users.verification.services.login", "code"),
    "api code login": ("/api/v1/users/login/code", True, "users.verification.services.login", "code"),
}


@pytest.mark.parametrize("endpoint", SECRET_ENDPOINTS)
def test_finding1_an_error_page_never_shows_a_password_or_code(endpoint, settings, monkeypatch):
    """DEBUG's error page shows the POST fields and every frame's variables: none of them may
    hold the password or the texted code of the request that failed."""
    path, as_json, breaks, kind = SECRET_ENDPOINTS[endpoint]
    browser = Client(raise_request_exception=False)
    if kind == "register":
        body = _register_body(browser, next_mobile())
    else:
        user = make_user(password=SECRET_PASSWORD)
        if kind == "login":
            body = {"mobile": user.mobile, "password": SECRET_PASSWORD}
        else:
            body = {"mobile": user.mobile, "code": _texted_code(browser, user.mobile, "login")}
    secrets_sent = [value for field, value in body.items() if field in ("password", "code")]

    def broken(*args, **kwargs):
        raise RuntimeError("the session store broke")

    monkeypatch.setattr(breaks, broken)
    settings.DEBUG = True
    if as_json:
        response = browser.post(path, json.dumps(body), content_type="application/json")
    else:
        response = browser.post(path, body)
    page = response.content.decode()
    assert response.status_code == 500 and "the session store broke" in page  # the DEBUG page
    for secret in secrets_sent:
        assert secret not in page, (endpoint, secret)


# --- 2. text messages ----------------------------------------------------------------------------


def test_finding2_a_stranger_cannot_lock_the_owner_out():
    owner = make_user()
    stranger = Client()
    for _ in range(5):  # the old daily cap of the number, spent from another address
        _a_minute_passes(owner.mobile)
        stranger.post("/user/sms/send", {"mobile": owner.mobile, "purpose": "login"}, REMOTE_ADDR="198.51.100.7")
    _a_minute_passes(owner.mobile)
    browser = Client()
    code = _texted_code(browser, owner.mobile, "login", remote="203.0.113.5")
    response = browser.post("/user/login/code", {"mobile": owner.mobile, "code": code}, REMOTE_ADDR="203.0.113.5")
    assert response.status_code == 302 and browser.session[SESSION_KEY] == str(owner.pk)


def test_finding2_a_send_does_not_tell_who_is_registered():
    registered, unknown = make_user().mobile, next_mobile()
    for purpose in ("register", "login"):
        answers = []
        for index, mobile in enumerate((registered, unknown)):
            response = Client().post(
                "/user/sms/send", {"mobile": mobile, "purpose": purpose}, REMOTE_ADDR=f"10.67.{index}.1"
            )
            answers.append((response.status_code, response.json()))
        assert answers[0] == answers[1], (purpose, answers)
        _a_minute_passes(registered)
        _a_minute_passes(unknown)
    # Each message says what happened instead, to the number's owner only.
    assert "already has an account" in _outbox_of(registered)[0]
    assert "no account" in _outbox_of(unknown)[1]


def test_finding2_addresses_of_one_ipv6_64_share_a_budget_and_ipv4_is_unchanged(settings):
    settings.SMS_SENDS_PER_IP_PER_HOUR = 2

    def send(remote: str) -> int:
        response = Client().post("/user/sms/send", {"mobile": next_mobile(), "purpose": "register"}, REMOTE_ADDR=remote)
        return response.status_code

    assert [send("2001:db8:5:6::1"), send("2001:db8:5:6::2"), send("2001:db8:5:6:ffff::3")] == [200, 200, 429]
    assert send("2001:db8:5:7::1") == 200  # the next /64 is someone else
    assert [send("192.0.2.1"), send("192.0.2.1"), send("192.0.2.1"), send("192.0.2.2")] == [200, 200, 429, 200]


def test_finding2_addresses_of_one_ipv6_64_share_the_login_budget(ratelimit_clock):
    """30 login attempts a minute per client: 32 tries from 32 addresses of one /64, each for
    another number (the per-number limit never trips), are one client's."""
    statuses = [
        Client()
        .post("/user/login", {"mobile": next_mobile(), "password": "wrong-guess"}, REMOTE_ADDR=f"2001:db8:8:8::{n:x}")
        .status_code
        for n in range(1, 33)
    ]
    assert statuses[:30] == [400] * 30 and statuses[30:] == [429, 429]


def test_finding2_the_whole_shop_has_an_hourly_cap(settings):
    settings.SMS_SENDS_PER_HOUR = 2
    for key in redis().scan_iter(match=f"{keys.PREFIX}sms:shop:*"):
        redis().delete(key)
    statuses = [
        Client()
        .post("/user/sms/send", {"mobile": next_mobile(), "purpose": "register"}, REMOTE_ADDR=f"10.68.{n}.1")
        .status_code
        for n in range(3)
    ]
    assert statuses == [200, 200, 429]


# --- 3. headers and cookies ------------------------------------------------------------------------

PAGES = ["/goods/goodsList", "/user/index", "/user/register", "/user/login/code", "/admin/login/", "/api/docs/"]


@pytest.mark.parametrize("path", PAGES)
def test_finding3_every_page_has_a_content_security_policy(path):
    response = Client().get(path)
    assert response.status_code == 200
    policy = response.get("Content-Security-Policy", "")
    directives = dict((part.strip().split(" ", 1) + [""])[:2] for part in policy.split(";") if part.strip())
    assert directives.get("default-src") == "'self'", policy
    assert "'unsafe-inline'" not in policy and "'unsafe-eval'" not in policy, policy
    assert directives.get("object-src") == "'none'" and directives.get("frame-ancestors") == "'none'", policy
    # Every inline script or style on the page carries this response's nonce.
    nonce = re.search(r"'nonce-([^']+)'", directives.get("script-src", ""))
    page = response.content.decode()
    inline = re.findall(r"<(script|style)(?![^>]*\bsrc=)([^>]*)>", page)
    for tag, attributes in inline:
        assert nonce and f'nonce="{nonce[1]}"' in attributes, (path, tag, attributes)
    assert not re.search(r"\son[a-z]+=", page), "an inline event handler"


def _production_request(script: str) -> dict:
    """Run `script` (which prints JSON) under the production settings, on the test database and
    Redis, with the test client asking as if through an https proxy."""
    env = dict(
        {k: v for k, v in os.environ.items() if k != "DJANGO_ALLOW_ASYNC_UNSAFE"},
        DJANGO_SETTINGS_MODULE="seckill_site.settings.production",
        SECRET_KEY=secrets.token_urlsafe(50),
        ALLOWED_HOSTS="shop.example.com",
        DATABASE_URL=child_database_url(),
    )
    prelude = "import django, json; django.setup(); from django.test import Client; "
    prelude += "c = Client(HTTP_HOST='shop.example.com', HTTP_X_FORWARDED_PROTO='https'); "
    result = subprocess.run(
        [sys.executable, "-c", prelude + script], cwd=ROOT, env=env, capture_output=True, text=True, timeout=120
    )
    assert result.returncode == 0, result.stderr[-3000:]
    return json.loads(result.stdout.strip().splitlines()[-1])


def test_finding3_production_hsts_and_cookie_flags():
    seen = _production_request(
        "r = c.get('/user/index'); l = c.get('/language', {'language': 'zh-hans', 'next': '/user/index'}); "
        "cookies = {**{k: dict(v) for k, v in r.cookies.items()}, **{k: dict(v) for k, v in l.cookies.items()}}; "
        "print(json.dumps({'hsts': r.get('Strict-Transport-Security'), 'csp': r.get('Content-Security-Policy'), "
        "'cookies': cookies}))"
    )
    hsts = dict((part.strip().split("=", 1) + [""])[:2] for part in seen["hsts"].split(";"))
    if "preload" in hsts:  # what the preload list demands of a site that asks to be on it
        assert int(hsts["max-age"]) >= 365 * 24 * 3600 and "includeSubDomains" in hsts, seen["hsts"]
    assert seen["csp"]
    assert {"csrftoken", "django_language"} <= set(seen["cookies"]), seen["cookies"]
    for name, cookie in seen["cookies"].items():
        assert cookie["secure"] is True and cookie["samesite"] == "Lax", (name, cookie)
    for name, cookie in seen["cookies"].items():
        assert cookie["httponly"] is True, (name, cookie)


def test_finding3_the_language_cookie_follows_the_settings(settings):
    settings.LANGUAGE_COOKIE_SECURE, settings.LANGUAGE_COOKIE_HTTPONLY = True, True
    settings.LANGUAGE_COOKIE_SAMESITE, settings.LANGUAGE_COOKIE_AGE = "Strict", 3600
    cookie = Client().get("/language", {"language": "zh-hans", "next": "/"}).cookies["django_language"]
    assert cookie.value == "zh-hans" and cookie["secure"] and cookie["httponly"]
    assert cookie["samesite"] == "Strict" and cookie["max-age"] == 3600


# --- 4. /metrics and /readyz ----------------------------------------------------------------------


def test_finding4_metrics_trusts_no_peer_by_default(settings):
    settings.METRICS_TOKEN = ""  # METRICS_ALLOWED_NETWORKS as it comes
    # As nginx or HAProxy on the same host would forward a stranger's request:
    for peer in ("127.0.0.1", "::1"):
        assert Client().get("/metrics", REMOTE_ADDR=peer).status_code == 403
    settings.METRICS_TOKEN = "scrape-token-1"
    assert Client().get("/metrics", HTTP_AUTHORIZATION="Bearer scrape-token-1").status_code == 200


def test_finding4_readyz_names_the_failing_dependency_but_not_its_error(settings, monkeypatch):
    settings.METRICS_TOKEN, settings.METRICS_ALLOWED_NETWORKS = "scrape-token-2", []
    error = "connection to 10.20.30.40:6379 refused by redis-py 8.1"

    def refused():
        raise ConnectionError(error)

    monkeypatch.setitem(health.CHECKS, "redis", refused)
    anyone = Client().get("/readyz", REMOTE_ADDR="127.0.0.1")
    assert anyone.status_code == 503 and anyone.json()["failed"] == ["redis"]
    assert "10.20.30.40" not in anyone.content.decode() and "refused" not in anyone.content.decode()
    operator = Client().get("/readyz", HTTP_AUTHORIZATION="Bearer scrape-token-2")
    assert operator.status_code == 503 and error in operator.json()["checks"]["redis"]["error"]


# --- 5. the captcha's 429 ---------------------------------------------------------------------------


def test_finding5_the_captcha_429_says_when_to_come_back(settings, ratelimit_clock):
    """The captcha's limits (per shopper and sale: SECKILL_CAPTCHAS_PER_MINUTE; the per-user
    limit across sales is gone, issue 24) and the path's per-request limit answer 429 with
    Retry-After, on the page and the API alike."""
    sale, user = make_sale(stock=5), make_user()
    browser = Client()
    browser.force_login(user)
    answers = [browser.get("/seckill/verifyCode", {"goodsId": sale.pk}) for _ in range(21)]
    assert [a.status_code for a in answers[:20]] == [200] * 20
    assert answers[20].status_code == 429 and 0 < int(answers[20]["Retry-After"]) <= 60
    paths = [browser.get("/seckill/path", {"goodsId": sale.pk, "verifyCode": 1}) for _ in range(6)]
    assert paths[5].status_code == 429 and 0 < int(paths[5]["Retry-After"]) <= 5
    from testutils.clients import api
    from testutils.factories.users import session_for

    token_user = make_user()
    app = api()
    app.cookies["sessionid"] = session_for(token_user)
    statuses = [app.get(f"/api/v1/sales/{sale.pk}/captcha") for _ in range(21)]
    assert statuses[20].status_code == 429 and 0 < int(statuses[20]["Retry-After"]) <= 60
