"""Writes on users: login, registration."""

from dataclasses import dataclass

from django.contrib.auth import authenticate, login, logout
from django.db.models import F
from django.http import HttpRequest
from django.utils.translation import gettext as _

from users.models import User


@dataclass(frozen=True)
class LoginResult:
    user: User | None
    error: str | None = None


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


def user_register(*, mobile: str, password: str, nickname: str = "") -> User:
    """Caller has validated the input (users.forms.RegisterForm)."""
    return User.objects.create_user(mobile=mobile, password=password, nickname=nickname or mobile[-4:])
