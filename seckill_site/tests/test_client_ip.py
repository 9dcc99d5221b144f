"""seckill_site.http.client_ip: the client's address behind the proxies the settings trust, and
only through them; every per-IP limit counts on it."""

import pytest
from django.test import Client, RequestFactory

from seckill_site.http import client_bucket, client_ip, ip_bucket


def _ip(settings, *, remote: str, forwarded: str | None = None, networks=(), count: int = 0) -> str:
    settings.SECKILL_TRUSTED_PROXIES, settings.SECKILL_TRUSTED_PROXY_COUNT = list(networks), count
    extra = {"REMOTE_ADDR": remote}
    if forwarded is not None:
        extra["HTTP_X_FORWARDED_FOR"] = forwarded
    return client_ip(RequestFactory().get("/", **extra))


def test_without_trusted_proxies_the_header_is_ignored(settings):
    assert _ip(settings, remote="203.0.113.9", forwarded="198.51.100.1") == "203.0.113.9"


@pytest.mark.parametrize(
    "forwarded, remote, expected",
    [
        ("198.51.100.7", "10.0.0.2", "198.51.100.7"),  # one proxy of ours
        ("198.51.100.7, 10.0.0.5", "10.0.0.2", "198.51.100.7"),  # two of ours
        ("6.6.6.6, 198.51.100.7", "10.0.0.2", "198.51.100.7"),  # the client forged a first hop
        ("198.51.100.7", "203.0.113.9", "203.0.113.9"),  # not through our proxy: its own address
        ("garbage, 198.51.100.7", "10.0.0.2", "198.51.100.7"),
        ("198.51.100.7, garbage", "10.0.0.2", "10.0.0.2"),  # a broken hop ends the walk
        ("2001:db8::7", "fd00::1", "2001:db8::7"),
        (None, "10.0.0.2", "10.0.0.2"),
    ],
)
def test_trusted_networks(settings, forwarded, remote, expected):
    assert _ip(settings, remote=remote, forwarded=forwarded, networks=["10.0.0.0/8", "fd00::/8"]) == expected


@pytest.mark.parametrize(
    "forwarded, count, expected",
    [
        ("198.51.100.7", 1, "198.51.100.7"),
        ("6.6.6.6, 198.51.100.7", 1, "198.51.100.7"),  # forged first hop ignored
        ("6.6.6.6, 198.51.100.7, 10.0.0.5", 2, "198.51.100.7"),
        ("not-an-ip", 1, "10.0.0.2"),
        (None, 1, "10.0.0.2"),
    ],
)
def test_trusted_proxy_count(settings, forwarded, count, expected):
    assert _ip(settings, remote="10.0.0.2", forwarded=forwarded, count=count) == expected


@pytest.mark.django_db
def test_shoppers_behind_the_load_balancer_have_buckets_of_their_own(settings, ratelimit_clock):
    """Thirty failed logins from one shopper behind the balancer limit that shopper, not the
    next one, who arrives through the same proxy address."""
    settings.SECKILL_TRUSTED_PROXIES = ["10.0.0.0/8"]
    proxy = {"REMOTE_ADDR": "10.0.0.2"}

    def login(shopper_ip: str, mobile: str) -> int:
        body = {"mobile": mobile, "password": "wrong-guess"}
        return Client().post("/user/login", body, HTTP_X_FORWARDED_FOR=shopper_ip, **proxy).status_code

    codes = [login("198.51.100.1", f"137{i:08d}") for i in range(31)]
    assert codes[:30] == [400] * 30 and codes[30] == 429
    assert login("198.51.100.2", "13799999999") == 400
    # A forged header from the limited shopper does not buy a fresh bucket.
    assert login("1.2.3.4, 198.51.100.1", "13799999998") == 429


def test_ipv6_clients_share_a_bucket_per_64_and_ipv4_addresses_stay_themselves(settings):

    assert ip_bucket("2001:db8:1:2::1") == ip_bucket("2001:db8:1:2:ffff:ffff:ffff:fffe") == "2001:db8:1:2::/64"
    assert ip_bucket("2001:db8:1:3::1") != ip_bucket("2001:db8:1:2::1")
    assert ip_bucket("192.0.2.7") == "192.0.2.7" and ip_bucket("192.0.2.8") == "192.0.2.8"
    assert ip_bucket("::ffff:192.0.2.7") == "192.0.2.7"  # an IPv4 client on a dual-stack socket
    assert ip_bucket("not-an-address") == "not-an-address"
    settings.RATELIMIT_IPV6_PREFIX = 56
    assert ip_bucket("2001:db8:1:2ff::1") == "2001:db8:1:200::/56"
    request = RequestFactory().get("/", REMOTE_ADDR="2001:db8:1:2aa::9")
    assert client_bucket(request) == "2001:db8:1:200::/56"


@pytest.mark.django_db
def test_the_api_login_throttle_counts_one_64_as_one_client(ratelimit_clock):
    from testutils.clients import api

    statuses = [
        api()
        .post(
            "/api/v1/users/login",
            {"mobile": f"139{n:08d}", "password": "wrong-guess"},
            format="json",
            REMOTE_ADDR=f"2001:db8:7:7::{n:x}",
        )
        .status_code
        for n in range(1, 33)
    ]
    assert statuses[:30] == [400] * 30 and statuses[30:] == [429, 429]
