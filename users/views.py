from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.utils.translation import gettext as _
from django.views.decorators.debug import sensitive_post_parameters, sensitive_variables
from django.views.decorators.http import require_GET, require_http_methods, require_POST
from django_ratelimit.core import is_ratelimited

from seckill_site.codes import Code
from seckill_site.http import client_bucket, fail, form_errors_message, ok, wants_json
from users import notices, services
from users.codes import UserCode
from users.forms import LoginForm, NoticeSettingsForm, RegisterForm
from users.http import (
    REGISTER_RATE_PER_IP,
    SECRET_FIELDS,
    after_logout,
    login_limited,
    next_of,
    redirect_next,
    result_ticket_drop,
    signed_in,
)
from users.nav import nav_data
from users.selectors import user_public_data
from users.verification.services import registration_record


@require_GET
def login_page(request: HttpRequest) -> HttpResponse:
    return render(request, "users/login.html", {"form": LoginForm(), "next": next_of(request)})


@sensitive_variables()
@sensitive_post_parameters(*SECRET_FIELDS)
@require_POST
def login_submit(request: HttpRequest) -> HttpResponse:
    as_json = wants_json(request)
    if login_limited(request):
        if as_json:
            return fail(Code.TOO_MANY_REQUESTS, _("Too many login attempts, wait a minute."))
        form = LoginForm(request.POST)
        form.is_valid()
        context = {"form": form, "error": _("Too many login attempts, wait a minute."), "next": next_of(request)}
        return render(request, "users/login.html", context, status=429)
    form = LoginForm(request.POST)
    if not form.is_valid():
        message = form_errors_message(form)
        if as_json:
            return fail(Code.BAD_REQUEST, message)
        return render(request, "users/login.html", {"form": form, "next": next_of(request)}, status=400)
    result = services.user_login(request=request, **form.cleaned_data)
    if result.user is None:
        if as_json:
            return fail(UserCode.LOGIN_FAILED, result.error)
        context = {"form": form, "error": result.error, "next": next_of(request)}
        return render(request, "users/login.html", context, status=400)
    if as_json:
        return ok(user_public_data(result.user))
    return redirect_next(request)


@require_POST
def logout_view(request: HttpRequest) -> HttpResponse:
    services.user_logout(request=request)
    if wants_json(request):
        return result_ticket_drop(ok())
    return result_ticket_drop(redirect_next(request, after_logout()))


def register_form_save(form: RegisterForm):
    """The new user, or None with the errors on the form (a number taken meanwhile included)."""
    if not form.is_valid():
        return None
    try:
        return services.user_register(**form.cleaned_data_for_service())
    except services.MobileTaken as taken:
        form.add_error("mobile", str(taken))
        return None


@sensitive_variables()
@sensitive_post_parameters(*SECRET_FIELDS)
@require_http_methods(["GET", "POST"])
def register(request: HttpRequest) -> HttpResponse:
    if request.method == "GET":
        return render(request, "users/register.html", {"form": RegisterForm(), "next": next_of(request)})
    ip = client_bucket(request)
    if is_ratelimited(
        request, group="user.register", key=lambda _group, _request: ip, rate=REGISTER_RATE_PER_IP, increment=True
    ):
        return (
            fail(Code.TOO_MANY_REQUESTS)
            if wants_json(request)
            else render(
                request,
                "users/register.html",
                {"form": RegisterForm(request.POST), "error": Code.TOO_MANY_REQUESTS.msg, "next": next_of(request)},
                status=429,
            )
        )
    form = RegisterForm(request.POST)
    user = register_form_save(form)
    if user is None:
        if wants_json(request):
            return fail(Code.BAD_REQUEST, form_errors_message(form))
        return render(request, "users/register.html", {"form": form, "next": next_of(request)}, status=400)
    registration_record(ip=ip)
    services.user_login(request=request, mobile=user.mobile, password=form.cleaned_data["password"])
    if wants_json(request):
        return ok(user_public_data(user))
    messages.success(request, _("Welcome, %(name)s! Your account is ready.") % {"name": user.nickname or user.mobile})
    return redirect_next(request)  # back to the sale that sent them here, if one did


@require_GET
def me(request: HttpRequest) -> HttpResponse:
    """The small user-specific fragment the cached pages fetch (greeting, login state)."""
    return ok(nav_data(request))


@require_http_methods(["GET", "POST"])
@login_required
def notice_settings(request: HttpRequest) -> HttpResponse:
    user = signed_in(request)
    if request.method == "POST":
        form = NoticeSettingsForm(request.POST)
        if form.is_valid():  # a missing box is off; a language, if sent, must be one of the shop's
            language = form.cleaned_data.pop("language")
            if language:
                services.user_language_set(user=user, language=language)
            notices.notice_settings_save(user=user, **form.cleaned_data)
            messages.success(request, _("Notification settings saved."))
            return redirect("users:notifications")
        return render(request, "users/notifications.html", {"form": form, "mobile": user.mobile}, status=400)
    chosen = notices.notice_settings_of(user=user)
    initial = {name: getattr(chosen, name) for name in NoticeSettingsForm.base_fields if name != "language"}
    form = NoticeSettingsForm(initial={**initial, "language": notices.notice_language(user)})
    return render(request, "users/notifications.html", {"form": form, "mobile": user.mobile})
