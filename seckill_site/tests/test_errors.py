import pytest
from django.test import override_settings

DEAD_REDIS = {
    "default": {
        "BACKEND": "django_redis.cache.RedisCache",
        "LOCATION": "redis://127.0.0.1:1/0",  # nothing listens on port 1: a real refused connection
        "OPTIONS": {"SOCKET_CONNECT_TIMEOUT": 0.2, "SOCKET_TIMEOUT": 0.2},
    }
}


@pytest.mark.django_db
@pytest.mark.parametrize("url, json", [("/goods/goodsList", False), ("/goods/getDetails/1", True)])
def test_redis_outage_is_a_friendly_503(client, url, json):
    client.cookies["sessionid"] = "x" * 32  # makes the session backend reach Redis
    with override_settings(CACHES=DEAD_REDIS):
        response = client.get(url)
    assert response.status_code == 503 and response["Retry-After"] == "5"
    if json:
        assert response.json()["msg"] == "the shop is busy, retry in a moment"
    else:
        assert b"busy" in response.content and b"<html" in response.content


@pytest.mark.django_db
def test_login_page_still_renders_without_redis(client):
    # Django's cache session backend treats an unreachable cache as an empty session.
    with override_settings(CACHES=DEAD_REDIS):
        assert client.get("/user/index").status_code == 200


@pytest.mark.django_db
def test_unknown_pages_are_friendly_404s(client):
    response = client.get("/no/such/page")
    assert response.status_code == 404 and b"Back to the sales" in response.content
    assert client.get("/seckill/nothing/here").json()["code"] == 500404


@pytest.mark.django_db
def test_pages_and_envelopes_speak_chinese_when_asked(client):
    from testutils.factories.sales import make_sale

    make_sale()
    page = client.get("/zh-hans/goods/goodsList", HTTP_ACCEPT_LANGUAGE="en").content.decode()
    assert "秒杀商品" in page and "Flash sales" not in page  # the address names the language
    english = client.get("/goods/goodsList", HTTP_ACCEPT_LANGUAGE="zh-hans").content.decode()
    assert "Flash sales" in english  # each language has its own cached page
    body = client.get("/seckill/result", {"goodsId": 1}, HTTP_ACCEPT_LANGUAGE="zh-hans").json()
    assert body["msg"] == "请先登录"


@pytest.mark.django_db
def test_the_language_switch_sets_the_cookie_and_stays_on_site(client):
    response = client.get("/language", {"language": "zh-hans", "next": "/orders/"})
    assert response.status_code == 302 and response["Location"] == "/zh-hans/orders/"
    assert client.cookies["django_language"].value == "zh-hans"
    assert "我的订单" in client.get("/user/index").content.decode()
    assert client.get("/language", {"language": "xx", "next": "https://evil.example/"})["Location"] == "/"


def test_the_balancers_own_503_is_the_shops_busy_envelope():
    """deploy/haproxy.cfg answers for the shop when no web node is ready: the same JSON the
    shop's own "busy, retry" is (in English; the balancer knows no visitor's language)."""
    import re
    from pathlib import Path

    from django.utils import translation

    from seckill_site.codes import Code
    from seckill_site.http import fail

    config = (Path(__file__).resolve().parents[2] / "deploy" / "haproxy.cfg").read_text()
    body = re.search(r"http-error status 503 content-type \"application/json\" string '([^']*)'", config)
    assert body is not None
    with translation.override("en"):
        assert body.group(1).encode() == fail(Code.SERVER_BUSY).content
        # Its timeout waiting for a node, too: a 503 with the same body and a Retry-After.
        assert "http-error status 504 errorfile deploy/haproxy-busy.http" in config
        head, _, answer = (
            (Path(__file__).resolve().parents[2] / "deploy" / "haproxy-busy.http").read_bytes().partition(b"\r\n\r\n")
        )
        assert head.startswith(b"HTTP/1.1 503 ") and b"\r\nRetry-After: 5" in head
        assert answer == fail(Code.SERVER_BUSY).content


@pytest.mark.django_db(transaction=True)
def test_a_write_refused_by_a_server_in_recovery_is_a_503_and_a_retryable_outage(client):
    """A leader demoted in a failover refuses writes for the seconds before HAProxy takes it out
    of rotation: PostgreSQL's read-only error is an outage (503, tasks retry), never a 500."""
    from django.db import OperationalError, connection

    from testutils.factories.users import make_user

    user = make_user()
    client.force_login(user)  # before: logging in writes last_login
    with connection.cursor() as cursor:
        cursor.execute("SET SESSION CHARACTERISTICS AS TRANSACTION READ ONLY")
    try:
        with pytest.raises(OperationalError, match="read-only transaction"):
            type(user).objects.filter(pk=user.pk).update(nickname="written")
        address = {"recipient": "张三", "phone": "13800000000", "region": "浙江省", "city": "杭州市",
                   "district": "西湖区", "street": "文三路 100 号"}  # fmt: skip
        response = client.post("/api/v1/users/addresses", address, content_type="application/json")
        assert response.status_code == 503 and response["Retry-After"], response.content
        assert response.json()["code"] == 500503
    finally:
        with connection.cursor() as cursor:
            cursor.execute("SET SESSION CHARACTERISTICS AS TRANSACTION READ WRITE")
    assert client.post("/api/v1/users/addresses", address, content_type="application/json").status_code < 500
