"""Users API: register, log in (a token), log out (revoke it), who am I.

Validation is the pages' forms and the writes are users.services, as on /user/login.
"""

from typing import cast

from django.utils.decorators import method_decorator
from django.views.decorators.debug import sensitive_post_parameters, sensitive_variables
from drf_spectacular.utils import extend_schema
from rest_framework.permissions import AllowAny
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from seckill_site.api import (
    BoundedJSONParser,
    Credentials,
    PerIpThrottle,
    api_fail,
    api_form_errors,
    api_ok,
    envelope,
    errors,
    request_fields,
    throttle,
)
from seckill_site.http import client_bucket
from users import services
from users.codes import UserCode
from users.forms import LoginForm, RegisterForm
from users.http import REGISTER_RATE_PER_IP, SECRET_FIELDS, result_ticket_drop, signed_in
from users.permissions import IsShopper
from users.revocation import user_auth_revoke
from users.selectors import user_public_data
from users.serializers import (
    LoginInputSerializer,
    RegisterInputSerializer,
    SessionSerializer,
    TokenSerializer,
    UserSerializer,
)
from users.throttles import LOGIN_THROTTLES
from users.tokens import TOKEN_LIFETIME, api_token_issue, api_token_revoke, api_tokens_of
from users.verification.services import registration_record
from users.views import register_form_save


def _form_data(request: Request) -> dict:
    return request_fields(request, "mobile", "password", "nickname", "code")


@method_decorator(sensitive_post_parameters(*SECRET_FIELDS), name="dispatch")
class LoginApi(APIView):
    authentication_classes: list = []
    permission_classes = [AllowAny]
    # JSON only: a cross-site HTML form cannot post JSON, so nobody can log a victim's
    # browser into their own account through this CSRF-exempt endpoint (login CSRF).
    parser_classes = [BoundedJSONParser]
    # Both counters of the login page: per IP and per mobile number.
    throttle_classes = LOGIN_THROTTLES

    @extend_schema(
        tags=["users"],
        summary="Log in: a token for `Authorization: Token <key>`",
        description="Also starts a browser session (users.services.user_login). "
        "Limited like the login page: 30 a minute per IP, 10 a minute per mobile number.",
        request=LoginInputSerializer,
        responses={
            200: envelope("LoginEnvelope", SessionSerializer()),
            **errors(400, 429),
        },
        auth=[],
    )
    @method_decorator(sensitive_variables())
    def post(self, request: Request) -> Response:
        form = LoginForm(_form_data(request))
        if not form.is_valid():
            return api_form_errors(form)
        result = services.user_login(request=request._request, issue_token=True, **form.cleaned_data)
        if result.user is None:
            return api_fail(UserCode.LOGIN_FAILED, result.error)
        return api_ok({"token": result.token, "user": user_public_data(result.user)})


@method_decorator(sensitive_post_parameters(*SECRET_FIELDS), name="dispatch")
class RegisterApi(APIView):
    authentication_classes: list = []
    permission_classes = [AllowAny]
    parser_classes = [BoundedJSONParser]
    throttle_classes = [throttle(PerIpThrottle, "user.register", REGISTER_RATE_PER_IP)]

    @extend_schema(
        tags=["users"],
        summary="Register a shopper; answers a token as a login would",
        description="`code` is the 6-digit code texted to the number by POST users/sms/send "
        "(purpose `register`); without a valid one the registration is refused.",
        request=RegisterInputSerializer,
        responses={201: envelope("RegisterEnvelope", SessionSerializer()), **errors(400, 429)},
        auth=[],
    )
    @method_decorator(sensitive_variables())
    def post(self, request: Request) -> Response:
        data = _form_data(request)
        # The page asks twice for the password; an API client sends it once.
        form = RegisterForm({**data, "password_again": data.get("password")})
        user = register_form_save(form)
        if user is None:
            return api_form_errors(form)
        registration_record(ip=client_bucket(request._request))
        token = api_token_issue(user_id=user.pk)
        return api_ok({"token": token, "user": user_public_data(user)}, status_code=201)


class LogoutApi(APIView):
    @extend_schema(
        tags=["users"],
        summary="Log out: revoke the token (on every device) and end the session",
        request=None,
        responses={200: envelope("LogoutEnvelope"), **errors(401)},
    )
    def post(self, request: Request) -> Response:
        credentials = cast(Credentials, request.auth)  # IsAuthenticated: the authentication's credentials
        if credentials.token is not None:
            api_token_revoke(key=credentials.token)
        services.user_logout(request=request._request)
        response = api_ok()
        result_ticket_drop(response)
        return response


class LogoutEverywhereApi(APIView):
    @extend_schema(
        tags=["users"],
        summary="Log out everywhere: end every session and revoke every token of mine, this one included",
        request=None,
        responses={200: envelope("LogoutEverywhereEnvelope"), **errors(401)},
    )
    def post(self, request: Request) -> Response:
        user_auth_revoke(user_id=signed_in(request).pk)
        services.user_logout(request=request._request)
        response = api_ok()
        result_ticket_drop(response)
        return response


class TokenListApi(APIView):
    @extend_schema(
        tags=["users"],
        summary="My live API tokens (their first characters, issue and expiry times)",
        description=f"A token expires {TOKEN_LIFETIME // 86400} days after it was issued, however much "
        "it is used; log in again for a new one. POST users/logout revokes the token it is sent with, "
        "users/logout-everywhere all of them; a password change or deactivation revokes them all too.",
        responses={200: envelope("TokenListEnvelope", TokenSerializer(many=True)), **errors(401)},
    )
    def get(self, request: Request) -> Response:
        return api_ok(api_tokens_of(user_id=signed_in(request).pk))


class MeApi(APIView):
    permission_classes = [IsShopper]

    @extend_schema(
        tags=["users"],
        summary="The logged-in user",
        responses={200: envelope("MeEnvelope", UserSerializer()), **errors(401)},
    )
    def get(self, request: Request) -> Response:
        return api_ok(user_public_data(signed_in(request)))
