import time

import pytest
from django.contrib.auth import SESSION_KEY
from django.test import Client

from testutils.factories.users import PASSWORD, make_user, texted_code
from users.codes import UserCode
from users.middleware import REFRESHED_AT
from users.models import User
from users.sessions import SessionStore

pytestmark = pytest.mark.django_db
JSON = {"HTTP_ACCEPT": "application/json"}


def test_login_page_renders(client):
    response = client.get("/user/index")
    assert response.status_code == 200 and b'name="mobile"' in response.content


def test_form_login_redirects_and_counts(client):
    user = make_user()
    response = client.post("/user/login", {"mobile": user.mobile, "password": PASSWORD})
    assert response.status_code == 302 and response["Location"] == "/goods/goodsList"
    user.refresh_from_db()
    assert user.login_count == 1 and user.last_login is not None
    assert client.session[SESSION_KEY] == str(user.pk)


def test_json_login_returns_the_user_without_password(client):
    user = make_user(nickname="Noodle")
    body = client.post("/user/login", {"mobile": user.mobile, "password": PASSWORD}, **JSON).json()
    assert body["code"] == 0 and body["data"]["nickname"] == "Noodle"
    assert not {"password", "salt"} & set(body["data"])


def test_session_lives_in_redis(client):
    user = make_user()
    client.post("/user/login", {"mobile": user.mobile, "password": PASSWORD})
    key = client.cookies["sessionid"].value
    assert SessionStore(session_key=key).get(SESSION_KEY) == str(user.pk)


@pytest.mark.parametrize(
    "data, status",
    [
        ({"mobile": "13000009999", "password": "whatever1"}, 400),  # unknown mobile
        ({"mobile": "USER", "password": "wrong-password"}, 400),  # wrong password
        ({"mobile": "USER"}, 400),  # missing password
        ({}, 400),
        ({"mobile": "12345", "password": "x"}, 400),  # not a mobile number
        ({"mobile": "1" * 500, "password": "x" * 5000}, 400),
    ],
)
def test_login_failures_are_clear_4xx(client, data, status):
    user = make_user()
    data = {k: (user.mobile if v == "USER" else v) for k, v in data.items()}
    json_response = client.post("/user/login", data, **JSON)
    assert json_response.status_code == status and json_response.json()["code"] != 0 and json_response.json()["msg"]
    page = client.post("/user/login", data)
    assert page.status_code == status and b'class="alert"' in page.content or b"field-error" in page.content
    assert SESSION_KEY not in client.session


def test_wrong_password_message(client):
    user = make_user()
    body = client.post("/user/login", {"mobile": user.mobile, "password": "nope-nope"}, **JSON).json()
    assert body["code"] == UserCode.LOGIN_FAILED.code and body["msg"] == "Wrong mobile number or password."


def test_login_is_rate_limited_per_mobile(client, ratelimit_clock):
    user = make_user()
    codes = [
        client.post(
            "/user/login", {"mobile": user.mobile, "password": "bad-guess"}, **JSON, REMOTE_ADDR=f"10.0.0.{i}"
        ).status_code
        for i in range(12)
    ]
    assert codes[:10] == [400] * 10 and codes[10:] == [429, 429]


def test_login_is_rate_limited_per_ip(client, ratelimit_clock):
    codes = [
        client.post("/user/login", {"mobile": f"1300000{i:04d}", "password": "bad-guess"}, **JSON).status_code
        for i in range(32)
    ]
    assert 429 in codes and codes[:30] == [400] * 30


def test_logout(client):
    user = make_user()
    client.force_login(user)
    assert client.post("/user/logout").status_code == 302
    assert SESSION_KEY not in client.session


def test_logout_by_get_is_refused(client):
    assert client.get("/user/logout").status_code == 405


def test_register_then_logged_in(client):
    code = texted_code("13111112222")
    response = client.post(
        "/user/register",
        {
            "mobile": "13111112222",
            "nickname": "New",
            "password": "good-pass-9",
            "password_again": "good-pass-9",
            "code": code,
        },
    )
    assert response.status_code == 302
    user = User.objects.get(mobile="13111112222")
    assert user.check_password("good-pass-9") and client.session[SESSION_KEY] == str(user.pk)


@pytest.mark.parametrize(
    "data",
    [
        {"mobile": "abc", "password": "good-pass-9", "password_again": "good-pass-9"},
        {"mobile": "13111112222", "password": "good-pass-9", "password_again": "other-pass-9"},
        {"mobile": "13111112222", "password": "123", "password_again": "123"},
        {},
    ],
)
def test_register_rejects_bad_input(client, data):
    assert client.post("/user/register", data).status_code == 400
    assert client.post("/user/register", data, **JSON).status_code == 400
    assert not User.objects.filter(mobile="13111112222").exists()


def test_register_refuses_a_nickname_with_a_line_break_on_the_page_and_the_api(client):
    for mobile, answer in (("13111112223", "page"), ("13111112224", "api")):
        data = {"mobile": mobile, "nickname": "New\rURL:x", "password": "good-pass-9", "password_again": "good-pass-9",
                "code": texted_code(mobile)}  # fmt: skip
        if answer == "page":
            response = client.post("/user/register", data)
        else:
            response = client.post("/api/v1/users/register", data, content_type="application/json")
        assert response.status_code == 400 and "U+000D" in response.content.decode(), answer
        assert not User.objects.filter(mobile=mobile).exists()


def test_register_rejects_a_taken_mobile(client):
    user = make_user()
    data = {"mobile": user.mobile, "password": "good-pass-9", "password_again": "good-pass-9", "code": "123456"}
    assert client.post("/user/register", data).status_code == 400


def test_session_expiry_slides(client, settings):
    settings.SESSION_SLIDING_REFRESH_SECONDS = 0
    user = make_user()
    client.post("/user/login", {"mobile": user.mobile, "password": PASSWORD})
    from django.core.cache import cache

    key = SessionStore(client.cookies["sessionid"].value).cache_key
    cache.expire(key, 5)
    assert cache.ttl(key) <= 5
    client.get("/user/me")
    assert cache.ttl(key) > 60 * 29  # re-saved with a fresh 30 minutes
    assert client.session[REFRESHED_AT] <= time.time()


def test_session_is_not_rewritten_on_every_request(client):
    user = make_user()
    client.post("/user/login", {"mobile": user.mobile, "password": PASSWORD})
    from django.core.cache import cache

    key = SessionStore(client.cookies["sessionid"].value).cache_key
    cache.expire(key, 100)
    client.get("/user/me")
    assert cache.ttl(key) <= 100  # refreshed at login, so not again within the minute


def test_me_fragment(client):
    assert client.get("/user/me").json()["data"] is None
    client.force_login(make_user(nickname="Ann"))
    data = client.get("/user/me").json()["data"]
    assert data["nickname"] == "Ann"
    # The logout form's token (the CSRF cookie is HttpOnly in production): a valid one.
    checked = Client(enforce_csrf_checks=True)
    checked.cookies = client.cookies
    assert checked.post("/user/logout", {"csrfmiddlewaretoken": data["csrfToken"]}).status_code == 302
