"""Pages and JSON for text-message codes: send a code, log in by code. Thin: parse, call
users.verification."""

from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.utils.translation import gettext as _
from django.views.decorators.debug import sensitive_post_parameters, sensitive_variables
from django.views.decorators.http import require_http_methods, require_POST

from seckill_site.codes import Code
from seckill_site.http import client_bucket, fail, ok, wants_json
from users import verification
from users.forms import form_errors_message
from users.selectors import user_public_data
from users.views import SECRET_FIELDS, _login_limited, _redirect_next, _safe_next


def sms_send_answer(result: verification.SmsSendResult, *, as_api: bool = False):
    """The envelope for a send: the wait is in `data` either way, for the resend countdown."""
    from seckill_site.api import api_fail, api_ok

    if result.sent:
        return (api_ok if as_api else ok)({"resendIn": result.wait})
    code = Code.TOO_MANY_REQUESTS if result.wait else Code.BAD_REQUEST
    response = (api_fail if as_api else fail)(code, result.error, data={"resendIn": result.wait})
    if result.wait:
        response["Retry-After"] = str(result.wait)
    return response


@require_POST
def sms_send(request: HttpRequest) -> HttpResponse:
    form = verification.SmsSendForm(request.POST)
    if not form.is_valid():
        return fail(Code.BAD_REQUEST, form_errors_message(form))
    result = verification.sms_code_send(**form.cleaned_data, requester=client_bucket(request))
    return sms_send_answer(result)


@sensitive_variables()
@sensitive_post_parameters(*SECRET_FIELDS)
@require_http_methods(["GET", "POST"])
def login_by_code(request: HttpRequest) -> HttpResponse:
    template = "users/login_code.html"
    if request.method == "GET":
        return render(request, template, {"form": verification.CodeLoginForm(), "next": _safe_next(request)})
    as_json = wants_json(request)
    if _login_limited(request):  # the password login's counters: one budget per IP and number
        message = _("Too many login attempts, wait a minute.")
        if as_json:
            return fail(Code.TOO_MANY_REQUESTS, message)
        context = {"form": verification.CodeLoginForm(request.POST), "error": message, "next": _safe_next(request)}
        return render(request, template, context, status=429)
    form = verification.CodeLoginForm(request.POST)
    if not form.is_valid():
        if as_json:
            return fail(Code.BAD_REQUEST, form_errors_message(form))
        return render(request, template, {"form": form, "next": _safe_next(request)}, status=400)
    result = verification.user_login_by_code(request=request, mobile=form.cleaned_data["mobile"])
    if result.user is None:
        if as_json:
            return fail(Code.LOGIN_FAILED, result.error)
        return render(request, template, {"form": form, "error": result.error, "next": _safe_next(request)}, 400)
    if as_json:
        return ok(user_public_data(result.user))
    return _redirect_next(request)
