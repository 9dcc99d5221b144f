"""Text-message codes in the API: send one, log in with one (registration takes one in
users/register). Same services, answers and limits as the pages (users.verification.views)."""

from django.http import HttpResponse
from django.utils.decorators import method_decorator
from django.views.decorators.debug import sensitive_post_parameters, sensitive_variables
from drf_spectacular.utils import extend_schema
from rest_framework.permissions import AllowAny
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from seckill_site.api import (
    BoundedJSONParser,
    api_answer,
    api_fail,
    api_form_errors,
    api_ok,
    envelope,
    errors,
    request_fields,
)
from seckill_site.http import client_bucket
from users.codes import UserCode
from users.http import SECRET_FIELDS
from users.selectors import user_public_data
from users.serializers import CodeLoginInputSerializer, SessionSerializer, SmsSendInputSerializer, SmsSentSerializer
from users.throttles import LOGIN_THROTTLES
from users.tokens import api_token_issue
from users.verification import services
from users.verification.forms import CodeLoginForm, SmsSendForm
from users.verification.views import sms_send_answer


class SmsSendApi(APIView):
    authentication_classes: list = []
    permission_classes = [AllowAny]
    parser_classes = [BoundedJSONParser]

    @extend_schema(
        tags=["users"],
        summary="Text a 6-digit code to a mobile number, for registering or logging in",
        description="The code lives 5 minutes, is used once and allows 5 checks. Per number and client (IP, "
        "IPv6 /64) one message a minute and 5 a day; per number SMS_SENDS_PER_NUMBER_PER_DAY from clients that "
        "never entered one of its codes; per client SMS_SENDS_PER_IP_PER_HOUR; for the whole shop "
        "SMS_SENDS_PER_HOUR. Over a limit, 429 with `data.resendIn` (seconds) and Retry-After. The answer is "
        "the same whether or not the number has an account: the message says (a code, or what to do instead).",
        request=SmsSendInputSerializer,
        responses={200: envelope("SmsSentEnvelope", SmsSentSerializer()), **errors(400, 429)},
        auth=[],
    )
    def post(self, request: Request) -> Response | HttpResponse:
        form = SmsSendForm(request_fields(request, "mobile", "purpose"))
        if not form.is_valid():
            return api_form_errors(form)
        result = services.sms_code_send(**form.cleaned_data, requester=client_bucket(request._request))
        return api_answer(sms_send_answer(result))


@method_decorator(sensitive_post_parameters(*SECRET_FIELDS), name="dispatch")
class CodeLoginApi(APIView):
    authentication_classes: list = []
    permission_classes = [AllowAny]
    parser_classes = [BoundedJSONParser]  # JSON only, like users/login: no login CSRF from HTML forms
    throttle_classes = LOGIN_THROTTLES

    @extend_schema(
        tags=["users"],
        summary="Log in with a code texted by users/sms/send (purpose login): a token",
        description="Limited like users/login, on the same counters.",
        request=CodeLoginInputSerializer,
        responses={200: envelope("CodeLoginEnvelope", SessionSerializer()), **errors(400, 429)},
        auth=[],
    )
    @method_decorator(sensitive_variables())
    def post(self, request: Request) -> Response:
        form = CodeLoginForm(request_fields(request, "mobile", "code"))
        if not form.is_valid():
            return api_form_errors(form)
        result = services.user_login_by_code(request=request._request, mobile=form.cleaned_data["mobile"])
        if result.user is None:
            return api_fail(UserCode.LOGIN_FAILED, result.error)
        return api_ok({"token": api_token_issue(user_id=result.user.pk), "user": user_public_data(result.user)})
