"""Writes on users: login, registration (the address book's are users.addresses.services)."""

from dataclasses import dataclass
from typing import Any

from django.conf import settings
from django.contrib.auth import authenticate, login, logout
from django.db import IntegrityError, transaction
from django.db.models import F
from django.http import HttpRequest
from django.utils import translation
from django.utils.translation import gettext as _
from django_ratelimit.core import is_ratelimited

from seckill_site.http import client_bucket
from users.models import MOBILE_TAKEN_MESSAGE, User, mobile_normalize
from users.sessions import auth_epoch, auth_epoch_ensure
from users.tokens import api_token_issue, api_token_revoke

# Login attempts, on the shop's login page, its API and the admin's login alike (one budget:
# switching between them buys an attacker nothing).
LOGIN_RATE_PER_IP = "30/m"
LOGIN_RATE_PER_MOBILE = "10/m"
LOGIN_GROUP_IP = "user.login.ip"
LOGIN_GROUP_MOBILE = "user.login.mobile"


@dataclass(frozen=True)
class LoginResult:
    user: User | None
    error: str | None = None
    token: str | None = None  # with issue_token: the API token issued


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


def user_language_remember(*, user: User) -> None:
    """Keep the language of the page a shopper first logs in from, for the text messages the shop
    sends them (users.notices); one they chose on their settings page stays."""
    User.objects.filter(pk=user.pk, language="").update(language=translation.get_language() or "")


def user_language_set(*, user: User, language: str) -> None:
    if language not in dict(settings.LANGUAGES):
        raise ValueError(f"not one of the shop's languages: {language!r}")
    User.objects.filter(pk=user.pk).update(language=language)


def user_login(*, request: HttpRequest, mobile: str, password: str, issue_token: bool = False) -> LoginResult:
    """Authenticate and start a Redis-backed session (and with `issue_token`, an API token);
    counts the login on the user row.

    Checking a password takes a while (the hasher is slow on purpose). If the user's
    credentials are revoked meanwhile — a password reset commits while the old one is being
    checked — the session and token issued after it would outlive the revocation. So the auth
    epoch is read before the check and again after everything is issued: if it moved, what
    was issued is revoked again here and the login is refused."""
    epoch = _auth_epoch_of(mobile)
    user = authenticate(request, mobile=mobile, password=password)
    if user is None:
        return LoginResult(user=None, error=_("Wrong mobile number or password."))
    login(request, user)
    token = api_token_issue(user_id=user.pk) if issue_token else None
    if auth_epoch(user.pk) != epoch:
        logout(request)
        if token is not None:
            api_token_revoke(key=token)
        return LoginResult(user=None, error=_("Your account changed while you were logging in; log in again."))
    User.objects.filter(pk=user.pk).update(login_count=F("login_count") + 1)
    user_language_remember(user=user)
    user.refresh_from_db(fields=["login_count", "language"])
    return LoginResult(user=user, token=token)


def _auth_epoch_of(mobile: str) -> str | None:
    user_id = User.objects.filter(mobile=mobile_normalize(mobile)).values_list("pk", flat=True).first()
    return auth_epoch_ensure(user_id) if user_id is not None else None


def user_logout(*, request: HttpRequest) -> None:
    logout(request)


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


# --- the address book ----------------------------------------------------------------------------
