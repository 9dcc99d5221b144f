"""What the users app's pages and API read from a request the same way, whichever endpoint
(password login, login by code, registration) takes it."""

from django.conf import settings
from django.core.exceptions import PermissionDenied
from django.http import HttpRequest, HttpResponse
from django.urls import reverse

from seckill_site.http import next_path, redirect_target
from users import services
from users.models import User

REGISTER_RATE_PER_IP = "10/m"
# What the pages and the API that take a password or a texted code hide from error reports
# (Django's DEBUG page, the 500 mail to ADMINS): the POST fields, and every local variable of
# the view (a form's data, a JSON body) via sensitive_variables().
SECRET_FIELDS = ("password", "password_again", "code")


def _next_raw(request: HttpRequest) -> str | None:
    return request.POST.get("next") or request.GET.get("next")


def after_login() -> str:
    """Where a shopper goes when no `next` says: the sale list, in the language active now."""
    return reverse("goods:list")


def after_logout() -> str:
    """Where a shopper goes after logging out when no `next` says: the login page, in the
    language active now."""
    return reverse("users:index")


def next_of(request: HttpRequest, fallback: str | None = None) -> str:
    """The `next` the client sent when it is a path on this site (seckill_site.http.next_path),
    else `fallback`, else after_login()."""
    return next_path(_next_raw(request), fallback if fallback is not None else after_login())


def redirect_next(request: HttpRequest, fallback: str | None = None) -> HttpResponse:
    return redirect_target(_next_raw(request), fallback if fallback is not None else after_login())


def login_limited(request: HttpRequest) -> bool:
    """Count a login attempt of a page's form (password or code: one budget per IP and number)."""
    return services.login_attempt_limited(request=request, mobile=request.POST.get("mobile"))


def signed_in(request: HttpRequest) -> User:
    """The request's user, for a view that only a signed-in user reaches (login_required, or an
    API permission that requires a shopper or a merchant). Anyone else is refused, never served."""
    user = request.user
    if not isinstance(user, User) or not user.is_authenticated:
        raise PermissionDenied
    return user


def result_ticket_drop(response: HttpResponse) -> HttpResponse:
    """Delete the seckill result poll's ticket (seckill.tickets) with the session it was given
    in; the ticket names that session, so this only tidies the browser."""
    cookie, path = settings.SECKILL_RESULT_TICKET_COOKIE, settings.SECKILL_RESULT_TICKET_PATH
    response.delete_cookie(cookie, path=path, samesite="Lax")
    return response
