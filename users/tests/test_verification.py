"""Phone verification: codes texted through the configured backend, single use, few checks,
limited per number and requester, per requester and for the whole shop; registration needs
one, login by code takes one; nobody learns from a send whether a number has an account."""

import json

import pytest
from django.contrib.auth import SESSION_KEY

from seckill_site.redis import client as redis
from seckill_site.redis import now
from testutils.factories.users import PASSWORD, make_merchant, make_user, next_mobile, texted_code
from users import sms
from users.models import User
from users.verification import keys
from users.verification.services import registrations_by_ip, sms_code_check, sms_code_send

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


def test_one_message_a_minute_and_five_a_day_per_number_and_requester(client):
    mobile = next_mobile()
    first = client.post("/user/sms/send", {"mobile": mobile, "purpose": "register"}).json()
    assert first["code"] == 0 and first["data"]["resendIn"] == 60
    again = client.post("/user/sms/send", {"mobile": mobile, "purpose": "register"})
    assert again.status_code == 429 and 0 < again.json()["data"]["resendIn"] <= 60
    assert again["Retry-After"] == str(again.json()["data"]["resendIn"])
    for _ in range(keys.SMS_SENDS_PER_DAY - 1):
        redis().delete(keys.sms_resend(mobile, "127.0.0.1"))  # a minute passes
        assert sms_code_send(mobile=mobile, purpose="register", requester="127.0.0.1").sent
    redis().delete(keys.sms_resend(mobile, "127.0.0.1"))
    refused = sms_code_send(mobile=mobile, purpose="register", requester="127.0.0.1")
    assert not refused.sent and "today" in refused.error and refused.wait > 60
    assert len([m for m in sms.outbox if m["mobile"] == mobile]) == keys.SMS_SENDS_PER_DAY
    # Another requester has budgets of its own for the number: it was neither waiting nor spent.
    assert sms_code_send(mobile=mobile, purpose="register", requester="10.0.0.3").sent


def test_a_stranger_cannot_spend_the_owners_budget(settings):
    """Finding: five sends from another address used to exhaust the number's daily cap for
    everyone. Now they exhaust only the stranger's own; the owner still gets a code."""
    owner = make_user()
    for _ in range(keys.SMS_SENDS_PER_DAY):
        redis().delete(keys.sms_resend(owner.mobile, "198.51.100.7"))
        assert sms_code_send(mobile=owner.mobile, purpose="login", requester="198.51.100.7").sent
    redis().delete(keys.sms_resend(owner.mobile, "198.51.100.7"))
    assert not sms_code_send(mobile=owner.mobile, purpose="login", requester="198.51.100.7").sent
    code = texted_code(owner.mobile, purpose="login", requester="203.0.113.5")
    assert sms_code_check(mobile=owner.mobile, purpose="login", code=code)


def test_the_numbers_overall_cap_spares_requesters_it_knows(settings):
    settings.SMS_SENDS_PER_NUMBER_PER_DAY = 3
    owner = make_user()
    # The owner once logged in by code from home: home is known to the number.
    code = texted_code(owner.mobile, purpose="login", requester="203.0.113.5")
    assert sms_code_check(mobile=owner.mobile, purpose="login", code=code)
    for stranger in ("198.51.100.1", "198.51.100.2"):
        assert sms_code_send(mobile=owner.mobile, purpose="login", requester=stranger).sent
    capped = sms_code_send(mobile=owner.mobile, purpose="login", requester="198.51.100.3")
    assert not capped.sent and "today" in capped.error  # three messages today: strangers stop here
    redis().delete(keys.sms_resend(owner.mobile, "203.0.113.5"))
    assert sms_code_send(mobile=owner.mobile, purpose="login", requester="203.0.113.5").sent


def test_sending_is_limited_per_requester(settings):
    settings.SMS_SENDS_PER_IP_PER_HOUR = 3
    answers = [sms_code_send(mobile=next_mobile(), purpose="register", requester="10.9.9.9") for _ in range(4)]
    assert [a.sent for a in answers] == [True, True, True, False]
    assert "network" in answers[-1].error and 0 < answers[-1].wait <= 3600
    assert sms_code_send(mobile=next_mobile(), purpose="register", requester="10.9.9.8").sent


def test_the_whole_shop_sends_at_most_its_hourly_cap_and_counts_the_refusals(settings):
    from prometheus_client import REGISTRY

    def counted(result: str) -> float:
        return REGISTRY.get_sample_value("seckill_sms_messages_total", {"result": result}) or 0.0

    sent_before, capped_before = counted("sent"), counted("shop_hour")
    settings.SMS_SENDS_PER_HOUR = 2
    for hour in range(int(now() // 3600) - 1, int(now() // 3600) + 2):
        redis().delete(keys.sms_shop_hour(hour))
    answers = [sms_code_send(mobile=next_mobile(), purpose="register", requester=f"10.8.0.{n}") for n in range(3)]
    assert [a.sent for a in answers] == [True, True, False]
    assert "this hour" in answers[-1].error and 0 < answers[-1].wait <= 3600
    assert counted("sent") - sent_before == 2 and counted("shop_hour") - capped_before == 1


def test_send_answers_alike_whether_or_not_the_number_has_an_account(client):
    """Finding: "This mobile number is already registered" told anyone who has an account.
    Every answer is now the same; the text message says what happened."""
    user, stranger = make_user(), next_mobile()
    answers = {}
    for purpose in ("register", "login"):
        for who, mobile in (("registered", user.mobile), ("unknown", stranger)):
            remote = f"10.7.{len(answers)}.1"
            response = client.post("/user/sms/send", {"mobile": mobile, "purpose": purpose}, REMOTE_ADDR=remote)
            answers[purpose, who] = (response.status_code, response.json())
    assert answers["register", "registered"] == answers["register", "unknown"]
    assert answers["login", "registered"] == answers["login", "unknown"]
    texts = {m["mobile"]: [] for m in sms.outbox}
    for message in sms.outbox:
        texts[message["mobile"]].append(message["text"])
    assert "already has an account" in texts[user.mobile][0] and "code is" in texts[user.mobile][1]
    assert "code is" in texts[stranger][0] and "no account" in texts[stranger][1]
    # Registering a number that has an account is refused like a wrong code, before any hint.
    refused = client.post("/user/register", register_data(user.mobile, "123456"), **JSON)
    assert refused.status_code == 400 and "already registered" not in refused.json()["msg"]


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


def test_a_deactivated_account_with_a_right_code_gets_the_page_again_as_a_400(client):
    """The refusal after a valid code is the login page with its message, a 400 in HTML: it was
    answered 200 with the header `Content-Type: 400` (the status passed as render's content type)."""
    user = make_user()
    code = texted_code(user.mobile, purpose="login")
    User.objects.filter(pk=user.pk).update(is_active=False)
    response = client.post("/user/login/code", {"mobile": user.mobile, "code": code})
    assert response.status_code == 400
    assert response["Content-Type"].startswith("text/html")
    assert SESSION_KEY not in client.session


def texted_code_again(mobile: str) -> str:
    redis().delete(keys.sms_resend(mobile, "127.0.0.1"))
    return texted_code(mobile, purpose="login")


def test_file_backend_writes_one_json_line_per_message(settings, tmp_path):
    settings.SMS_BACKEND = "users.sms.FileSmsBackend"
    settings.SMS_FILE_PATH = str(tmp_path / "sms.log")
    mobile = next_mobile()
    assert sms_code_send(mobile=mobile, purpose="register", requester="10.0.0.1").sent
    line = json.loads((tmp_path / "sms.log").read_text().splitlines()[-1])
    assert line["mobile"] == mobile and sms_code_check(
        mobile=mobile, purpose="register", code=line["text"].split("code is ")[1][:6]
    )


def test_console_backend_prints_the_message(settings, capsys):
    settings.SMS_BACKEND = "users.sms.ConsoleSmsBackend"
    mobile = next_mobile()
    sms_code_send(mobile=mobile, purpose="register", requester="10.0.0.1")
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
    from testutils.clients import api

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
