"""What a shopper sees while Redis fails over: "busy, retry", never "log in" or a 500, and an
answer already given (a purchase queued) stands."""

import pytest
from django.test import override_settings
from redis.exceptions import ConnectionError as RedisConnectionError

from sales.sale_state import keys
from seckill_site.redis import LockNotAcquired, lock, lock_try
from seckill_site.redis import client as redis
from testutils.factories.sales import make_sale
from testutils.factories.users import PASSWORD, make_user, session_for
from testutils.shoppers import path_for
from testutils.stores import DEAD_REDIS
from users.middleware import REFRESHED_AT
from users.sessions import SessionStore

pytestmark = pytest.mark.django_db


def redis_gone(*args, **kwargs):
    raise RedisConnectionError("no primary for this slot yet: the cluster is failing over")


@pytest.mark.parametrize(
    "method, url",
    [("get", "/seckill/result?goodsId=1"), ("get", "/user/me"), ("post", "/orders/1/pay"), ("get", "/orders/")],
)
def test_an_unreadable_session_store_is_busy_not_logged_out(client, method, url):
    """Django's cache sessions read an unreachable store as "no session": every shopper would
    have been sent to log in (401 or a redirect) during a failover."""
    client.cookies["sessionid"] = session_for(make_user())
    with override_settings(CACHES=DEAD_REDIS):
        response = getattr(client, method)(url, HTTP_ACCEPT="application/json")
    assert response.status_code == 503, response.content
    assert response["Retry-After"] == "5"


def test_a_queued_purchase_stands_when_sliding_the_session_fails_afterwards(client, flushes, monkeypatch):
    sale, user = make_sale(stock=3), make_user()
    session = SessionStore(session_for(user))
    session[REFRESHED_AT] = 0  # due for its once-a-minute re-save after this request
    session.save()
    client.cookies["sessionid"] = session.session_key
    path = path_for(user.pk, sale.pk)

    monkeypatch.setattr(SessionStore, "save", redis_gone)  # Redis fails after the gate answered
    response = client.post(f"/seckill/{path}/doSeckill", {"goodsId": sale.pk}, HTTP_ACCEPT="application/json")
    assert response.status_code == 200 and response.json()["data"]["status"] == "queued"
    assert flushes == [sale.pk] and int(redis().get(keys.stock(sale.pk))) == 2


def test_a_login_whose_session_cannot_be_saved_is_busy_not_a_500(client, monkeypatch):
    user = make_user()
    monkeypatch.setattr(SessionStore, "save", redis_gone)
    monkeypatch.setattr(SessionStore, "create", redis_gone)
    response = client.post("/user/login", {"mobile": user.mobile, "password": PASSWORD}, HTTP_ACCEPT="application/json")
    assert response.status_code == 503


def test_a_lock_is_released_only_by_its_holder():
    key = keys.reconcile_lock(1)
    with lock(key, ttl=5) as token:
        with pytest.raises(LockNotAcquired), lock(key, ttl=5):
            pass
        assert redis().get(key) == token.encode()
    assert redis().get(key) is None
    # A holder that outlived its ttl does not delete the next holder's lock.
    with lock(key, ttl=0.05):
        redis().set(key, "next-holder", px=5000)
    assert redis().get(key) == b"next-holder"


def test_a_caller_that_did_not_get_a_lock_leaves_it_alone():
    key = keys.reconcile_lock(2)
    with lock_try(key, ttl=5) as token:
        assert token is not None
        with lock_try(key, ttl=5) as other:
            assert other is None
        assert redis().get(key) == token.encode()
    assert redis().get(key) is None


def test_the_request_log_line_never_reads_an_unreadable_session_again(client, caplog):
    """The request log names the user from the session the request read; when that read failed
    (the answer is already a 503), reading again turned the 503 into a 500 (make cluster-test,
    a Redis primary killed under load)."""
    import logging

    caplog.set_level(logging.INFO, logger="seckill.request")
    client.cookies["sessionid"] = session_for(make_user())
    with override_settings(CACHES=DEAD_REDIS):
        response = client.get("/seckill/result?goodsId=1", HTTP_ACCEPT="application/json")
    assert response.status_code == 503, response.content
    assert any(getattr(record, "status", None) == 503 for record in caplog.records)
