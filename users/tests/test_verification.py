"""Phone verification: codes texted through the configured backend, single use, few checks,
limited per number and per client IP; registration needs one, login by code takes one."""

import json

import pytest
from django.contrib.auth import SESSION_KEY

from seckill_site.redis import client as redis
from seckill_site.redis import keys
from users import sms
from users.models import User
from users.tests.factories import PASSWORD, make_merchant, make_user, next_mobile, texted_code
from users.verification import registrations_by_ip, sms_code_check, sms_code_send

pytestmark = pytest.mark.django_db

JSON = {"HTTP_ACCEPT": "application/json"}


def register_data(mobile: str, code: str) -> dict:
    return {"mobile": mobile, "password": "good-pass-9", "password_again": "good-pass-9", "code": code}


def test_registration_without_a_valid_code_is_refused(client):
    mobile = next_mobile()
    for code in ("", "12345", "abcdef"):
        assert client.post("/user/register", register_data(mobile, code)).status_code == 400
    texted = texted_code(mobile)
    wrong = f"{(int(texted) + 1) % 10**6:06d}"
    response = client.post("/user/register", register_data(mobile, wrong), **JSON)
    assert response.status_code == 400 and "Wrong or expired code" in response.json()["msg"]
    assert not User.objects.filter(mobile=mobile).exists()
    assert client.post("/user/register", register_data(mobile, texted)).status_code == 302
    assert User.objects.filter(mobile=mobile).exists()


def test_a_code_is_for_its_number_and_purpose_and_used_once():
    mobile, other = next_mobile(), next_mobile()
    code = texted_code(mobile)
    assert not sms_code_check(mobile=other, purpose="register", code=code)
    assert not sms_code_check(mobile=mobile, purpose="login", code=code)
    assert sms_code_check(mobile=mobile, purpose="register", code=code)
    assert not sms_code_check(mobile=mobile, purpose="register", code=code)  # used


def test_a_code_allows_five_checks_then_is_gone():
    mobile = next_mobile()
    code = texted_code(mobile)
    wrong = f"{(int(code) + 1) % 10**6:06d}"
    for _ in range(keys.SMS_CODE_MAX_CHECKS):
        assert not sms_code_check(mobile=mobile, purpose="register", code=wrong)
    assert not sms_code_check(mobile=mobile, purpose="register", code=code)


def test_a_code_lives_five_minutes():
    mobile = next_mobile()
    texted_code(mobile)
    assert 0 < redis().ttl(keys.sms_code(mobile, "register")) <= 5 * 60


def test_a_typo_elsewhere_does_not_use_up_a_check(client):
    mobile = next_mobile()
    code = texted_code(mobile)
    for _ in range(keys.SMS_CODE_MAX_CHECKS + 1):
        data = {**register_data(mobile, code), "password_again": "another-9"}
        assert client.post("/user/register", data).status_code == 400
    assert client.post("/user/register", register_data(mobile, code)).status_code == 302


def test_one_message_a_minute_and_five_a_day_per_number(client):
    mobile = next_mobile()
    first = client.post("/user/sms/send", {"mobile": mobile, "purpose": "register"}).json()
    assert first["code"] == 0 and first["data"]["resendIn"] == 60
    again = client.post("/user/sms/send", {"mobile": mobile, "purpose": "register"})
    assert again.status_code == 429 and 0 < again.json()["data"]["resendIn"] <= 60
    assert again["Retry-After"] == str(again.json()["data"]["resendIn"])
    for _ in range(keys.SMS_SENDS_PER_DAY - 1):
        redis().delete(keys.sms_resend(mobile))  # a minute passes
        assert sms_code_send(mobile=mobile, purpose="register", ip="10.0.0.2").sent
    redis().delete(keys.sms_resend(mobile))
    refused = sms_code_send(mobile=mobile, purpose="register", ip="10.0.0.3")
    assert not refused.sent and "today" in refused.error and refused.wait > 60
    assert len([m for m in sms.outbox if m["mobile"] == mobile]) >= keys.SMS_SENDS_PER_DAY


def test_sending_is_limited_per_client_ip(settings):
    settings.SMS_SENDS_PER_IP_PER_HOUR = 3
    answers = [sms_code_send(mobile=next_mobile(), purpose="register", ip="10.9.9.9") for _ in range(4)]
    assert [a.sent for a in answers] == [True, True, True, False]
    assert "network" in answers[-1].error and 0 < answers[-1].wait <= 3600
    assert sms_code_send(mobile=next_mobile(), purpose="register", ip="10.9.9.8").sent


def test_no_code_for_a_registered_number_and_no_hint_for_an_unknown_one():
    user = make_user()
    taken = sms_code_send(mobile=user.mobile, purpose="register", ip="10.0.0.1")
    assert not taken.sent and "already registered" in taken.error
    before = len(sms.outbox)
    unknown = sms_code_send(mobile=next_mobile(), purpose="login", ip="10.0.0.1")
    assert unknown.sent and len(sms.outbox) == before  # answered alike, texted nothing


def test_bad_send_requests_are_a_clear_400(client):
    for data in ({}, {"mobile": "123", "purpose": "register"}, {"mobile": next_mobile(), "purpose": "spam"}):
        response = client.post("/user/sms/send", data)
        assert response.status_code == 400 and response.json()["code"] == 500101


def test_login_by_code(client):
    user = make_user()
    assert client.get("/user/login/code").status_code == 200
    code = texted_code(user.mobile, purpose="login")
    assert client.post("/user/login/code", {"mobile": user.mobile, "code": "000000"}).status_code in (400,)
    code = texted_code_again(user.mobile)
    response = client.post("/user/login/code", {"mobile": user.mobile, "code": code})
    assert response.status_code == 302 and client.session[SESSION_KEY] == str(user.pk)


def texted_code_again(mobile: str) -> str:
    redis().delete(keys.sms_resend(mobile))
    return texted_code(mobile, purpose="login")


def test_file_backend_writes_one_json_line_per_message(settings, tmp_path):
    settings.SMS_BACKEND = "users.sms.FileSmsBackend"
    settings.SMS_FILE_PATH = str(tmp_path / "sms.log")
    mobile = next_mobile()
    assert sms_code_send(mobile=mobile, purpose="register", ip="10.0.0.1").sent
    line = json.loads((tmp_path / "sms.log").read_text().splitlines()[-1])
    assert line["mobile"] == mobile and sms_code_check(
        mobile=mobile, purpose="register", code=line["text"].split("code is ")[1][:6]
    )


def test_console_backend_prints_the_message(settings, capsys):
    settings.SMS_BACKEND = "users.sms.ConsoleSmsBackend"
    mobile = next_mobile()
    sms_code_send(mobile=mobile, purpose="register", ip="10.0.0.1")
    assert f"[sms to {mobile}]" in capsys.readouterr().out


def test_the_register_page_offers_the_code_and_says_where_the_demo_puts_it(client, settings, tmp_path):
    settings.SMS_BACKEND = "users.sms.FileSmsBackend"
    settings.SMS_FILE_PATH = str(tmp_path / "sms.log")
    page = client.get("/user/register").content.decode()
    assert 'id="sms-send"' in page and str(tmp_path / "sms.log") in page and 'name="code"' in page


def test_the_admin_shows_accounts_per_ip_and_hour(client):
    for mobile in (next_mobile(), next_mobile()):
        code = texted_code(mobile)
        client.post("/user/register", register_data(mobile, code), REMOTE_ADDR="10.1.2.3")
        client.post("/user/logout")
    rows = registrations_by_ip()
    assert rows[0]["ip"] == "10.1.2.3" and rows[0]["accounts"] == 2
    merchant = make_merchant()
    client.force_login(merchant)
    page = client.get("/admin/users/user/registrations/")
    assert page.status_code == 200 and "10.1.2.3" in page.content.decode()
    assert "/admin/users/user/registrations/" in client.get("/admin/").content.decode()


def test_the_api_sends_codes_registers_with_one_and_logs_in_with_one():
    from seckill_site.tests.clients import api

    mobile = next_mobile()
    sent = api().post("/api/v1/users/sms/send", {"mobile": mobile, "purpose": "register"}, format="json")
    assert sent.status_code == 200 and sent.json()["data"]["resendIn"] == 60
    again = api().post("/api/v1/users/sms/send", {"mobile": mobile, "purpose": "register"}, format="json")
    assert again.status_code == 429 and again.json()["data"]["resendIn"] > 0
    code = [m for m in sms.outbox if m["mobile"] == mobile][-1]["text"].split("code is ")[1][:6]
    refused = api().post("/api/v1/users/register", {"mobile": mobile, "password": PASSWORD}, format="json")
    assert refused.status_code == 400 and "code" in refused.json()["data"]
    registered = api().post(
        "/api/v1/users/register", {"mobile": mobile, "password": PASSWORD, "code": code}, format="json"
    )
    assert registered.status_code == 201 and registered.json()["data"]["token"]
    login_code = texted_code_again(mobile)
    wrong = api().post("/api/v1/users/login/code", {"mobile": mobile, "code": "12345x"}, format="json")
    assert wrong.status_code == 400
    login = api().post("/api/v1/users/login/code", {"mobile": mobile, "code": login_code}, format="json")
    assert login.status_code == 200 and login.json()["data"]["user"]["mobile"] == mobile
