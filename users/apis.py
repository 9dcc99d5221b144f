"""Users API: register, log in (a token), log out (revoke it), who am I.

Validation is the pages' forms and the writes are users.services, as on /user/login.
"""

from typing import cast

from django.utils.decorators import method_decorator
from django.utils.translation import gettext as _
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
    id_parameter,
    request_fields,
    throttle,
)
from seckill_site.codes import Code
from seckill_site.http import client_bucket
from users import selectors, services
from users.codes import UserCode
from users.forms import AddressForm, LoginForm, RegisterForm
from users.http import REGISTER_RATE_PER_IP, SECRET_FIELDS, result_ticket_drop, signed_in
from users.models import Address
from users.permissions import IsShopper
from users.revocation import user_auth_revoke
from users.selectors import address_public_data, user_public_data
from users.serializers import (
    AddressInputSerializer,
    AddressSerializer,
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


# --- the address book ----------------------------------------------------------------------------

ADDRESS_ID = id_parameter("address_id", "address id")
# API field -> AddressForm field
_ADDRESS_INPUT = {
    "recipient": "recipient",
    "phone": "phone",
    "region": "region",
    "city": "city",
    "district": "district",
    "street": "street",
    "postcode": "postcode",
    "isDefault": "is_default",
}


def _address_form(request: Request, *, current: dict | None = None) -> AddressForm | Response:
    """The body checked for types and lengths, then validated by the pages' form, on top of
    `current` (a partial edit); the form, or the 400 answer."""
    serializer = AddressInputSerializer(data=request.data, partial=current is not None)
    serializer.is_valid(raise_exception=True)
    data = dict(current or {})
    data.update({_ADDRESS_INPUT[name]: value for name, value in serializer.validated_data.items()})
    if not data.get("is_default"):
        data.pop("is_default", None)  # a checkbox: absent is unticked
    form = AddressForm(data)
    if not form.is_valid():
        return api_form_errors(form)
    return form


def _address_or_404(request: Request, address_id: str):
    return selectors.address_of_user(user=signed_in(request), address_id=address_id)


class AddressListApi(APIView):
    permission_classes = [IsShopper]
    parser_classes = [BoundedJSONParser]

    @extend_schema(
        tags=["users"],
        operation_id="users_addresses_list",
        summary="My address book, the default address first",
        responses={200: envelope("AddressListEnvelope", AddressSerializer(many=True)), **errors(401)},
    )
    def get(self, request: Request) -> Response:
        return api_ok([address_public_data(a) for a in selectors.addresses_of_user(user=signed_in(request))])

    @extend_schema(
        tags=["users"],
        summary="Add an address (at most 20; the first one becomes the default)",
        request=AddressInputSerializer,
        responses={201: envelope("AddressCreateEnvelope", AddressSerializer()), **errors(400, 401, 409)},
    )
    def post(self, request: Request) -> Response:
        form = _address_form(request)
        if isinstance(form, Response):
            return form
        try:
            address = services.address_create(user=signed_in(request), **form.cleaned_data_for_service())
        except services.AddressBookFull as full:
            return api_fail(UserCode.ADDRESS_BOOK_FULL, str(full))
        return api_ok(address_public_data(address), status_code=201)


class AddressDetailApi(APIView):
    permission_classes = [IsShopper]
    parser_classes = [BoundedJSONParser]

    @extend_schema(
        tags=["users"],
        summary="One of my addresses",
        parameters=[ADDRESS_ID],
        responses={200: envelope("AddressEnvelope", AddressSerializer()), **errors(401, 404)},
    )
    def get(self, request: Request, address_id: str) -> Response:
        address = _address_or_404(request, address_id)
        if address is None:
            return api_fail(Code.NOT_FOUND, _("no such address"))
        return api_ok(address_public_data(address))

    @extend_schema(
        tags=["users"],
        summary="Edit one of my addresses (any subset of the fields); paid orders keep their copy",
        parameters=[ADDRESS_ID],
        request=AddressInputSerializer(partial=True),
        responses={200: envelope("AddressUpdateEnvelope", AddressSerializer()), **errors(400, 401, 404)},
    )
    def patch(self, request: Request, address_id: str) -> Response:
        address = _address_or_404(request, address_id)
        if address is None:
            return api_fail(Code.NOT_FOUND, _("no such address"))
        current = {name: getattr(address, name) for name in services.ADDRESS_FIELDS}
        form = _address_form(request, current=current)
        if isinstance(form, Response):
            return form
        changes = form.cleaned_data_for_service()
        if not changes["is_default"]:
            changes.pop("is_default")  # the default changes only by making another one default
        try:
            return api_ok(address_public_data(services.address_update(address=address, changes=changes)))
        except Address.DoesNotExist:
            return api_fail(Code.NOT_FOUND, _("no such address"))

    @extend_schema(
        tags=["users"],
        summary="Delete one of my addresses (another becomes the default); paid orders keep their copy",
        parameters=[ADDRESS_ID],
        request=None,
        responses={200: envelope("AddressDeleteEnvelope"), **errors(401, 404)},
    )
    def delete(self, request: Request, address_id: str) -> Response:
        address = _address_or_404(request, address_id)
        if address is None:
            return api_fail(Code.NOT_FOUND, _("no such address"))
        services.address_delete(address=address)
        return api_ok()


class AddressDefaultApi(APIView):
    permission_classes = [IsShopper]

    @extend_schema(
        tags=["users"],
        summary="Make one of my addresses the default",
        parameters=[ADDRESS_ID],
        request=None,
        responses={200: envelope("AddressDefaultEnvelope", AddressSerializer()), **errors(401, 404)},
    )
    def post(self, request: Request, address_id: str) -> Response:
        address = _address_or_404(request, address_id)
        if address is None:
            return api_fail(Code.NOT_FOUND, _("no such address"))
        try:
            return api_ok(address_public_data(services.address_default_set(address=address)))
        except Address.DoesNotExist:
            return api_fail(Code.NOT_FOUND, _("no such address"))
