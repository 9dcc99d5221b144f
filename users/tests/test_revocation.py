"""Password change, deactivation, logout everywhere and an admin's edit end every other
session and token of the user at once — at the seckill gate too, which reads no PostgreSQL —
and API tokens expire."""

from datetime import timedelta

import pytest
from django.contrib.auth import SESSION_KEY
from django.test import Client
from django.utils import timezone
from rest_framework.authtoken.models import Token

from testutils.clients import api
from testutils.factories.sales import make_sale
from testutils.factories.users import PASSWORD, make_user, session_for
from users.models import User
from users.sessions import SessionStore
from users.tokens import TOKEN_LIFETIME, api_token_issue

pytestmark = pytest.mark.django_db


@pytest.fixture
def shopper():
    """A shopper logged in twice (a browser session and an API token, both already used, so
    the token is in the Redis cache) and a running sale."""
    user, sale = make_user(), make_sale(stock=5)
    browser = Client()
    assert browser.post("/user/login", {"mobile": user.mobile, "password": PASSWORD}).status_code == 302
    token = api(None).post("/api/v1/users/login", {"mobile": user.mobile, "password": PASSWORD}, format="json")
    token = token.json()["data"]["token"]
    assert browser.get("/seckill/result", {"goodsId": sale.pk}).status_code == 200
    assert api(token).get(f"/api/v1/sales/{sale.pk}/result").status_code == 200
    return {"user": user, "sale": sale, "browser": browser, "token": token}


def _gate_answers(world) -> list[int]:
    """What the gate's endpoints answer the old browser session and the old token."""
    sale, browser, client = world["sale"].pk, world["browser"], api(world["token"])
    return [
        browser.get("/seckill/verifyCode", {"goodsId": sale}).status_code,
        browser.get("/seckill/path", {"goodsId": sale, "verifyCode": 1}).status_code,
        browser.post("/seckill/abc/doSeckill", {"goodsId": sale}).status_code,
        browser.get("/seckill/result", {"goodsId": sale}).status_code,
        client.get(f"/api/v1/sales/{sale}/captcha").status_code,
        client.post(f"/api/v1/sales/{sale}/buy/abc").status_code,
        client.get(f"/api/v1/sales/{sale}/result").status_code,
        client.get("/api/v1/users/me").status_code,
    ]


def _session_key(world) -> str:
    return world["browser"].cookies["sessionid"].value


def test_a_password_change_ends_other_sessions_and_tokens_at_the_gate(shopper, django_capture_on_commit_callbacks):
    key = _session_key(shopper)
    user = User.objects.get(pk=shopper["user"].pk)
    with django_capture_on_commit_callbacks(execute=True):
        user.set_password("a-new-pass-7")
        user.save()
    assert _gate_answers(shopper) == [401] * 8
    # Not extended either: the revoked session is gone from Redis.
    assert not SessionStore().exists(key)
    assert not Token.objects.filter(user=user).exists()


def test_deactivation_ends_sessions_and_even_a_cached_token_at_once(shopper, django_capture_on_commit_callbacks):
    user = User.objects.get(pk=shopper["user"].pk)
    with django_capture_on_commit_callbacks(execute=True):
        user.is_active = False
        user.save()
    assert _gate_answers(shopper) == [401] * 8


def test_logout_everywhere_ends_every_session_and_token(shopper):
    other = api(api_token_issue(user_id=shopper["user"].pk))
    assert other.post("/api/v1/users/logout-everywhere").status_code == 200
    assert _gate_answers(shopper) == [401] * 8


def test_the_tokens_are_listed_without_their_keys(shopper):
    listed = api(shopper["token"]).get("/api/v1/users/tokens").json()["data"]
    assert len(listed) == 1 and shopper["token"].startswith(listed[0]["prefix"]) and len(listed[0]["prefix"]) < 10
    assert listed[0]["expiresAt"] > listed[0]["createdAt"]


def test_an_admins_edit_ends_the_users_sessions(shopper, admin_client, django_capture_on_commit_callbacks):
    user = shopper["user"]
    with django_capture_on_commit_callbacks(execute=True):
        response = admin_client.post(
        f"/admin/users/user/{user.pk}/change/",
            {"mobile": user.mobile, "nickname": "renamed", "is_active": "on", "date_joined_0": "2026-01-01",
             "date_joined_1": "00:00:00"},
        )  # fmt: skip
    assert response.status_code == 302, response.content[:1000]
    assert _gate_answers(shopper) == [401] * 8
    # The admin, who edited someone else, is still logged in.
    assert admin_client.get("/admin/").status_code == 200


@pytest.mark.django_db(transaction=True)  # commits as in production: the revocation runs at save()
def test_an_admin_changing_their_own_password_keeps_that_session_only(client):
    admin = User.objects.create_superuser(mobile="13999999990", password=PASSWORD)
    elsewhere = Client()
    elsewhere.force_login(admin)
    client.force_login(admin)
    response = client.post(
        "/admin/password_change/",
        {"old_password": PASSWORD, "new_password1": "brand-new-pass-5", "new_password2": "brand-new-pass-5"},
    )
    assert response.status_code == 302
    assert client.get("/admin/").status_code == 200
    assert elsewhere.get("/admin/").status_code == 302  # to the login page
    assert SESSION_KEY not in elsewhere.session


def test_the_gate_reads_no_postgresql_and_one_redis_round_trip_for_the_session(shopper, django_assert_num_queries):
    from seckill_site.redis import client

    calls = []
    pipeline_class = type(client().pipeline())
    original = pipeline_class.execute

    def counting(self, *args, **kwargs):
        calls.append(len(self))  # commands queued (a cluster pipeline keeps them elsewhere)
        return original(self, *args, **kwargs)

    pipeline_class.execute = counting
    try:
        with django_assert_num_queries(0):
            response = shopper["browser"].post("/seckill/abc/doSeckill", {"goodsId": shopper["sale"].pk})
    finally:
        pipeline_class.execute = original
    assert response.status_code == 403  # the gate ran: "invalid path"
    assert calls[0] == 2  # the session and the auth epoch, in one pipeline


def test_a_session_that_carries_no_epoch_is_refused():
    """A session stored without the epoch it was made under (a store from before epochs, or
    written by hand) cannot be checked against a revocation: it is refused, not trusted."""
    from django.contrib.sessions.backends.cache import SessionStore as DjangoSessionStore

    user = make_user()
    legacy = DjangoSessionStore()
    legacy[SESSION_KEY] = str(user.pk)
    legacy.create()
    browser = Client()
    browser.cookies["sessionid"] = legacy.session_key
    assert browser.get("/seckill/result", {"goodsId": 1}).status_code == 401


def test_a_lost_epoch_reads_as_revoked_not_as_never_revoked():
    """Redis lost the user's epoch (evicted, or a failover lost it): their sessions end."""
    from seckill_site.redis import client
    from users import keys as redis_keys

    user = make_user()
    browser = Client()
    browser.cookies["sessionid"] = session_for(user)
    assert browser.get("/seckill/result", {"goodsId": 1}).status_code == 200
    client().delete(redis_keys.auth_epoch(user.pk))
    assert browser.get("/seckill/result", {"goodsId": 1}).status_code == 401


def test_tokens_expire(shopper):
    Token.objects.filter(key=shopper["token"]).update(created=timezone.now() - timedelta(seconds=TOKEN_LIFETIME + 1))
    from seckill_site.redis import client
    from users.tokens import _token_cache_key

    client().delete(_token_cache_key(shopper["token"]))
    assert api(shopper["token"]).get("/api/v1/users/me").status_code == 401
    # Logging in again issues a new one.
    fresh = api_token_issue(user_id=shopper["user"].pk)
    assert fresh != shopper["token"] and api(fresh).get("/api/v1/users/me").status_code == 200


def test_a_cached_token_expires_with_its_lifetime(shopper):
    from seckill_site.redis import client
    from users.tokens import _token_cache_key

    user_id = shopper["user"].pk
    client().set(_token_cache_key(shopper["token"]), f"{user_id}:{int(timezone.now().timestamp()) - 1}", ex=60)
    assert api(shopper["token"]).get(f"/api/v1/sales/{shopper['sale'].pk}/result").status_code == 401


def test_deleting_an_account_ends_its_sessions_and_cached_tokens_at_the_gate(
    shopper, django_capture_on_commit_callbacks
):
    """The gate never reads the user row: without a revocation a deleted account's session and
    cached token still bought (and its reservation then stalled the sale's writer)."""
    with django_capture_on_commit_callbacks(execute=True):
        User.objects.filter(pk=shopper["user"].pk).delete()  # a bulk delete, as the admin's action does
    assert _gate_answers(shopper) == [401] * 8


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("way", ["page", "api"])
def test_a_login_that_raced_a_password_change_issues_nothing_that_survives(monkeypatch, way):
    """Checking a password takes a while; a reset committed meanwhile revokes everything of the
    user, and the login must not hand out a session or token after it."""
    from users import services

    user = make_user()
    checked = services.authenticate

    def password_changed_meanwhile(request, **credentials):
        found = checked(request, **credentials)
        changed = User.objects.get(pk=user.pk)
        changed.set_password("another-pass-2")
        changed.save()  # commits (autocommit), then revokes
        return found

    monkeypatch.setattr(services, "authenticate", password_changed_meanwhile)
    credentials = {"mobile": user.mobile, "password": PASSWORD}
    if way == "page":
        browser = Client()
        response = browser.post("/user/login", credentials)
        assert response.status_code == 400
        session = browser.cookies.get("sessionid")
        assert session is None or SESSION_KEY not in SessionStore(session.value).load()
    else:
        response = api(None).post("/api/v1/users/login", credentials, format="json")
        assert response.status_code == 400 and response.json()["data"] is None
    assert not Token.objects.filter(user=user).exists()


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("revoke", ["everywhere", "this token"])
def test_a_revocation_between_a_token_read_and_its_cache_write_stays_revoked(monkeypatch, revoke):
    """A request misses the token cache and reads the row; the revocation commits; only then
    does the request write the cache. The token must not come back."""
    import threading

    from django.db import connection

    from seckill_site.redis import client
    from users import tokens
    from users.revocation import user_auth_revoke

    user = make_user()
    token = api_token_issue(user_id=user.pk)
    client().delete(tokens._token_cache_key(token))  # the cache entry lapsed
    read, revoked = threading.Event(), threading.Event()
    fill = tokens._token_cache_set

    def held_fill(*args, **kwargs):
        if threading.current_thread().name == "reader":
            read.set()
            assert revoked.wait(20)
        return fill(*args, **kwargs)

    monkeypatch.setattr(tokens, "_token_cache_set", held_fill)
    answers = {}

    def reader() -> None:
        try:
            answers["during"] = api(token).get("/api/v1/users/me").status_code
        finally:
            connection.close()

    thread = threading.Thread(target=reader, name="reader")
    thread.start()
    assert read.wait(20)
    if revoke == "everywhere":
        user_auth_revoke(user_id=user.pk)
    else:
        tokens.api_token_revoke(key=token)
    revoked.set()
    thread.join(30)
    assert answers["during"] == 200  # it began before the revocation
    assert api(token).get("/api/v1/users/me").status_code == 401
    assert tokens.api_token_user_id(token) is None
