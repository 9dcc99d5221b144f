"""Writes on users: login, registration."""

import secrets
from dataclasses import dataclass
from typing import Any

from django.contrib.auth import authenticate, login, logout
from django.db import IntegrityError, transaction
from django.db.models import F
from django.http import HttpRequest
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy
from django_ratelimit.core import is_ratelimited

from seckill_site.http import client_bucket
from seckill_site.redis import client, keys
from users.models import User, mobile_normalize

# Login attempts, on the shop's login page, its API and the admin's login alike (one budget:
# switching between them buys an attacker nothing).
LOGIN_RATE_PER_IP = "30/m"
LOGIN_RATE_PER_MOBILE = "10/m"
LOGIN_GROUP_IP = "user.login.ip"
LOGIN_GROUP_MOBILE = "user.login.mobile"
MOBILE_TAKEN_MESSAGE = gettext_lazy("This mobile number is already registered.")


@dataclass(frozen=True)
class LoginResult:
    user: User | None
    error: str | None = None


def login_attempt_limited(*, request: HttpRequest, mobile: Any) -> bool:
    """Count one login attempt against the caller's IP and the account it names; True when
    either is over its limit. The account is the mobile number as the login form would read
    it, so " 13700000001", "13700000001\\t", "１３７…" and the JSON number 13700000001 share one
    bucket. (The API counts the same buckets through seckill_site.api's throttles.)"""
    ip, account = client_bucket(request), mobile_normalize(mobile)
    by_ip = is_ratelimited(
        request, group=LOGIN_GROUP_IP, key=lambda _group, _request: ip, rate=LOGIN_RATE_PER_IP, increment=True
    )
    by_mobile = is_ratelimited(
        request,
        group=LOGIN_GROUP_MOBILE,
        key=lambda _group, _request: account,
        rate=LOGIN_RATE_PER_MOBILE,
        increment=True,
    )
    return by_ip or by_mobile


def user_login(*, request: HttpRequest, mobile: str, password: str) -> LoginResult:
    """Authenticate and start a Redis-backed session; counts the login on the user row."""
    user = authenticate(request, mobile=mobile, password=password)
    if user is None:
        return LoginResult(user=None, error=_("Wrong mobile number or password."))
    login(request, user)
    User.objects.filter(pk=user.pk).update(login_count=F("login_count") + 1)
    user.refresh_from_db(fields=["login_count"])
    return LoginResult(user=user)


def user_logout(*, request: HttpRequest) -> None:
    logout(request)


def user_auth_revoke(*, user_id: int) -> None:
    """End every session and API token of the user at once, the seckill gate included:
    on a password change or deactivation (User.save calls this once committed), an admin's
    edit of the user, or "log out everywhere".

    Sessions: a new random auth epoch in Redis; a session made under another one loads empty
    (users.sessions). Random, not a counter: if Redis lost the key, no old value comes back.
    Tokens: their rows and cache entries are deleted (seckill_site.api.api_tokens_revoke)."""
    from seckill_site.api import api_tokens_revoke

    client().set(keys.auth_epoch(user_id), secrets.token_hex(8))
    api_tokens_revoke(user_id=user_id)


class MobileTaken(Exception):
    """The mobile number is registered already; the message is for the person registering."""


def user_register(*, mobile: str, password: str, nickname: str = "") -> User:
    """Caller has validated the input (users.forms.RegisterForm). The form's "already
    registered" check cannot see a registration committed after it ran: two simultaneous
    sign-ups of one number both pass it, and the unique index stops the second. That one gets
    MobileTaken, the form's own answer, instead of an IntegrityError."""
    try:
        with transaction.atomic():
            return User.objects.create_user(mobile=mobile, password=password, nickname=nickname or mobile[-4:])
    except IntegrityError as error:
        if User.objects.filter(mobile=mobile).exists():
            raise MobileTaken(MOBILE_TAKEN_MESSAGE) from error
        raise
