"""Pages and JSON for text-message codes: send a code, log in by code. Thin: parse, call
users.verification.services, render (the API in users.verification.apis renders the same answers)."""

from django.conf import settings
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.utils.translation import gettext as _
from django.views.decorators.debug import sensitive_post_parameters, sensitive_variables
from django.views.decorators.http import require_http_methods, require_POST

from seckill_site.codes import Code
from seckill_site.http import Answer, client_bucket, fail, form_errors_message, ok, page_answer, wants_json
from users.codes import UserCode
from users.http import SECRET_FIELDS, login_limited, next_of, redirect_next
from users.selectors import user_public_data
from users.verification import services
from users.verification.forms import CodeLoginForm, SmsSendForm


def sms_send_answer(result: services.SmsSendResult) -> Answer:
    """What a send answers, page and API alike: the wait is in `data` either way, for the
    resend countdown, and in Retry-After when a limit refused it."""
    if result.sent:
        return Answer(data={"resendIn": result.wait})
    code = Code.TOO_MANY_REQUESTS if result.wait else Code.BAD_REQUEST
    headers = {"Retry-After": str(result.wait)} if result.wait else {}
    return Answer(code, data={"resendIn": result.wait}, msg=result.error, headers=headers)


@require_POST
def sms_send(request: HttpRequest) -> HttpResponse:
    form = SmsSendForm(request.POST)
    if not form.is_valid():
        return fail(Code.BAD_REQUEST, form_errors_message(form))
    result = services.sms_code_send(**form.cleaned_data, requester=client_bucket(request))
    return page_answer(sms_send_answer(result))


@sensitive_variables()
@sensitive_post_parameters(*SECRET_FIELDS)
@require_http_methods(["GET", "POST"])
def login_by_code(request: HttpRequest) -> HttpResponse:
    template = "users/login_code.html"
    if request.method == "GET":
        return render(request, template, {"form": CodeLoginForm(), "next": next_of(request)})
    as_json = wants_json(request)
    if login_limited(request):  # the password login's counters: one budget per IP and number
        message = _("Too many login attempts, wait a minute.")
        if as_json:
            return fail(Code.TOO_MANY_REQUESTS, message)
        context = {"form": CodeLoginForm(request.POST), "error": message, "next": next_of(request)}
        return render(request, template, context, status=429)
    form = CodeLoginForm(request.POST)
    if not form.is_valid():
        if as_json:
            return fail(Code.BAD_REQUEST, form_errors_message(form))
        return render(request, template, {"form": form, "next": next_of(request)}, status=400)
    result = services.user_login_by_code(request=request, mobile=form.cleaned_data["mobile"])
    if result.user is None:
        if as_json:
            return fail(UserCode.LOGIN_FAILED, result.error)
        return render(request, template, {"form": form, "error": result.error, "next": next_of(request)}, status=400)
    if as_json:
        return ok(user_public_data(result.user))
    return redirect_next(request)


def sms_demo_hint(request: HttpRequest) -> dict:
    """Context processor: where a developer finds the codes, for the pages that ask for one."""
    backend = settings.SMS_BACKEND.rsplit(".", 1)[-1]
    if backend == "ConsoleSmsBackend":
        return {"sms_hint": _("Demo: the code is printed in the server's log.")}
    if backend == "FileSmsBackend":
        return {"sms_hint": _("Demo: the code is written to %(path)s.") % {"path": settings.SMS_FILE_PATH}}
    return {}
