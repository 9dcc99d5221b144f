"""Limits per shopper per sale: captchas drawn and answers tried in a minute, counted in
Redis so every web node shares them, refused with a 429 in the envelope, and tallied for
the merchant's live view."""

import pytest
from django.contrib.auth import SESSION_KEY

from lab import prepare
from orders.selectors import sale_figures
from sales.sale_state import keys
from seckill.services import paths as services
from seckill_site.redis import client
from testutils.clients import api
from testutils.factories.sales import make_sale
from testutils.factories.users import make_user
from users.sessions import SessionStore
from users.tokens import api_token_issue

pytestmark = pytest.mark.django_db


def test_the_defaults_leave_room_for_people():
    from django.conf import settings

    assert settings.SECKILL_CAPTCHAS_PER_MINUTE == 20 and settings.SECKILL_PATHS_PER_MINUTE == 10


def test_captchas_past_the_limit_are_a_429_for_that_sale_only(shopper, settings):
    settings.SECKILL_CAPTCHAS_PER_MINUTE = 3
    sale, other = make_sale(), make_sale()
    answers = [shopper.get("/seckill/verifyCode", {"goodsId": sale.pk}) for _ in range(4)]
    assert [a.status_code for a in answers] == [200, 200, 200, 429]
    refused = answers[-1]
    body = refused.json()
    assert body["code"] == 500430
    assert body["msg"].startswith("At most 3 new captchas a minute for this sale: try again in ")
    assert 0 < body["data"]["retryAfter"] <= 60 and refused["Retry-After"] == str(body["data"]["retryAfter"])
    assert shopper.get("/seckill/verifyCode", {"goodsId": other.pk}).status_code == 200  # per sale
    figures = sale_figures(sale=sale)
    assert figures["refusedCaptcha"] == 1 and figures["refusedPath"] == 0


def test_no_limit_across_sales_locks_a_shopper_out_of_another_sale(shopper, settings):
    """Issue 24: 20 captchas for one sale in a minute used to lock the shopper out of every
    sale (a per-user view limit on top of the per-sale ones). Only the per-sale limit counts."""
    settings.SECKILL_CAPTCHAS_PER_MINUTE = 25
    sales = [make_sale() for _ in range(3)]
    statuses = [
        shopper.get("/seckill/verifyCode", {"goodsId": sale.pk}).status_code for sale in sales for _ in range(12)
    ]
    assert statuses == [200] * 36
    token = api_token_issue(user_id=shopper.user.pk)
    answer = api(token).get(f"/api/v1/sales/{sales[0].pk}/captcha")
    assert answer.status_code == 200 and answer["Content-Type"] == "image/png"


def test_the_spoken_captcha_shares_the_picture_limit_and_answers_the_path(shopper, settings):
    settings.SECKILL_CAPTCHAS_PER_MINUTE = 2
    sale = make_sale()
    spoken = shopper.get("/seckill/verifyAudio", {"goodsId": sale.pk})
    assert spoken.status_code == 200 and spoken["Content-Type"] == "audio/wav" and spoken.content[:4] == b"RIFF"
    digits = int(client().get(keys.captcha(sale.pk, shopper.user.pk)))
    assert 1000 <= digits <= 9999
    assert shopper.get("/seckill/path", {"goodsId": sale.pk, "verifyCode": digits}).json()["code"] == 0
    assert shopper.get("/seckill/verifyCode", {"goodsId": sale.pk}).status_code == 200
    refused = shopper.get("/seckill/verifyAudio", {"goodsId": sale.pk})
    assert refused.status_code == 429 and refused.json()["data"]["retryAfter"] > 0


def test_the_limit_is_per_shopper(settings):
    settings.SECKILL_CAPTCHAS_PER_MINUTE = 1
    sale, first, second = make_sale(), make_user(), make_user()
    services.captcha_create(user_id=first.pk, sale_id=sale.pk)
    with pytest.raises(services.SaleLimitReached):
        services.captcha_create(user_id=first.pk, sale_id=sale.pk)
    services.captcha_create(user_id=second.pk, sale_id=sale.pk)


def test_answers_past_the_limit_are_a_429_and_leave_the_captcha_alone(shopper, settings):
    settings.SECKILL_PATHS_PER_MINUTE = 2
    sale = make_sale()
    statuses = []
    for _ in range(2):
        shopper.get("/seckill/verifyCode", {"goodsId": sale.pk})
        answer = int(client().get(keys.captcha(sale.pk, shopper.user.pk)))
        statuses.append(shopper.get("/seckill/path", {"goodsId": sale.pk, "verifyCode": answer + 1}).status_code)
    shopper.get("/seckill/verifyCode", {"goodsId": sale.pk})
    answer = int(client().get(keys.captcha(sale.pk, shopper.user.pk)))
    refused = shopper.get("/seckill/path", {"goodsId": sale.pk, "verifyCode": answer})
    assert statuses == [400, 400] and refused.status_code == 429
    assert refused.json()["code"] == 500430 and "answers a minute" in refused.json()["msg"]
    assert int(client().get(keys.captcha(sale.pk, shopper.user.pk))) == answer  # not used up by the refusal
    assert sale_figures(sale=sale)["refusedPath"] == 1


def test_counters_carry_the_sale_hash_tag_and_expire_with_their_window(settings):
    settings.SECKILL_CAPTCHAS_PER_MINUTE = 1
    sale, user = make_sale(), make_user()
    services.captcha_create(user_id=user.pk, sale_id=sale.pk)
    key = keys.limit(sale.pk, "captcha", user.pk)
    assert f"{{{sale.pk}}}" in key and f"{{{sale.pk}}}" in keys.refused(sale.pk)
    assert 0 < client().ttl(key) <= keys.LIMIT_WINDOW
    with pytest.raises(services.SaleLimitReached) as refused:
        services.captcha_create(user_id=user.pk, sale_id=sale.pk)
    assert refused.value.limit == 1 and 0 < refused.value.retry_after <= keys.LIMIT_WINDOW
    assert 0 < client().ttl(keys.refused(sale.pk)) <= keys.REFUSED_TTL
    client().delete(key)  # the window ends
    services.captcha_create(user_id=user.pk, sale_id=sale.pk)


def test_the_api_shares_the_counters_with_the_pages(shopper, settings):
    settings.SECKILL_CAPTCHAS_PER_MINUTE = 2
    settings.SECKILL_PATHS_PER_MINUTE = 1
    sale = make_sale()
    assert shopper.get("/seckill/verifyCode", {"goodsId": sale.pk}).status_code == 200
    app = api(api_token_issue(user_id=shopper.user.pk))
    assert app.get(f"/api/v1/sales/{sale.pk}/captcha").status_code == 200
    refused = app.get(f"/api/v1/sales/{sale.pk}/captcha")
    assert refused.status_code == 429 and refused.json()["code"] == 500430 and refused["Retry-After"]
    assert app.post(f"/api/v1/sales/{sale.pk}/path", {"verifyCode": 1}, format="json").status_code in (200, 400)
    refused = app.post(f"/api/v1/sales/{sale.pk}/path", {"verifyCode": 1}, format="json")
    assert refused.status_code == 429 and refused.json()["data"]["retryAfter"] > 0
    figures = app.get(f"/api/v1/sales/{sale.pk}/captcha")  # still refused, and tallied
    assert figures.status_code == 429
    assert sale_figures(sale=sale)["refusedCaptcha"] == 2 and sale_figures(sale=sale)["refusedPath"] == 1


def test_the_bench_prepares_its_shoppers_within_the_limits(settings):
    """lab/prepare.py draws one captcha and tries one answer per shopper and sale: it
    stays within even the tightest limits."""
    settings.SECKILL_CAPTCHAS_PER_MINUTE = 1
    settings.SECKILL_PATHS_PER_MINUTE = 1
    sale, users = make_sale(), [make_user() for _ in range(3)]
    sessions = []
    for user in users:
        session = SessionStore()
        session[SESSION_KEY] = str(user.pk)
        session.create()
        sessions.append(session.session_key)
    paths = prepare._paths(([(user.pk, key) for user, key in zip(users, sessions, strict=True)], sale.pk))
    assert len(paths) == 3 and all(paths)
    assert sale_figures(sale=sale)["refusedCaptcha"] == 0 and sale_figures(sale=sale)["refusedPath"] == 0
