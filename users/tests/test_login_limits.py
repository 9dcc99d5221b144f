"""Credential stuffing: every login door (the page, the API, the admin) counts against one
per-account and one per-IP budget, and the account is the mobile number as the login form
reads it, however it was spelled."""

import pytest
from django.test import Client

from testutils.factories.users import make_user
from users.services import LOGIN_RATE_PER_MOBILE

pytestmark = pytest.mark.django_db
PER_MOBILE = int(LOGIN_RATE_PER_MOBILE.split("/")[0])  # 10 a minute
PER_IP = 30


@pytest.fixture(autouse=True)
def _still_clock(ratelimit_clock):
    pass


def _page(mobile, ip: str):
    return Client().post("/user/login", {"mobile": mobile, "password": "bad-guess"}, REMOTE_ADDR=ip)


def _api(mobile, ip: str):
    body = {"mobile": mobile, "password": "bad-guess"}
    return Client().post("/api/v1/users/login", body, content_type="application/json", REMOTE_ADDR=ip)


def _admin(mobile, ip: str):
    return Client().post("/admin/login/", {"username": mobile, "password": "bad-guess"}, REMOTE_ADDR=ip)


def test_admin_login_is_limited_per_account():
    staff = make_user(is_staff=True)
    codes = [_admin(staff.mobile, f"10.1.0.{i}").status_code for i in range(PER_MOBILE + 2)]
    assert codes[:PER_MOBILE] == [200] * PER_MOBILE and codes[PER_MOBILE:] == [429, 429]


def test_admin_login_is_limited_per_ip():
    codes = [_admin(f"139{i:08d}", "10.2.0.1").status_code for i in range(PER_IP + 2)]
    assert codes[:PER_IP] == [200] * PER_IP and codes[PER_IP:] == [429, 429]


def test_a_limited_admin_login_refuses_even_the_right_password():
    staff = make_user(is_staff=True)
    for i in range(PER_MOBILE):
        _admin(staff.mobile, f"10.3.0.{i}")
    response = Client().post("/admin/login/", {"username": staff.mobile, "password": "secret-pass-1"})
    assert response.status_code == 429 and b"Too many login attempts" in response.content


@pytest.mark.parametrize("door", [_page, _api, _admin])
def test_every_spelling_of_one_number_shares_one_bucket(door):
    user = make_user()
    spellings = [
        user.mobile,
        f" {user.mobile}",
        f"{user.mobile}\t",
        f"\n{user.mobile} ",
        user.mobile.translate(str.maketrans("0123456789", "０１２３４５６７８９")),  # full-width
        user.mobile.translate(str.maketrans("0123456789", "٠١٢٣٤٥٦٧٨٩")),  # Arabic-Indic
    ]
    if door is _api:
        spellings.append(int(user.mobile))  # a JSON number
    codes = [door(spellings[i % len(spellings)], f"10.4.{i}.1").status_code for i in range(PER_MOBILE + 2)]
    assert 429 not in codes[:PER_MOBILE] and codes[PER_MOBILE:] == [429, 429], codes


def test_the_page_the_api_and_the_admin_share_the_budget():
    user = make_user(is_staff=True)
    doors = [_page, _api, _admin]
    codes = [doors[i % 3](user.mobile, f"10.5.{i}.1").status_code for i in range(PER_MOBILE + 1)]
    assert 429 not in codes[:PER_MOBILE] and codes[PER_MOBILE] == 429, codes


def test_a_json_number_no_longer_shares_the_empty_bucket():
    """A number used to be counted as "" (with every other non-string): two accounts tried as
    numbers filled one bucket; each now has its own."""
    first, second = make_user(), make_user()
    for i in range(PER_MOBILE):
        assert _api(int(first.mobile), f"10.6.{i}.1").status_code == 400
    assert _api(int(first.mobile), "10.6.99.1").status_code == 429
    assert _api(int(second.mobile), "10.6.98.1").status_code == 400
