"""Shared pieces of the REST API (/api/v1/): the `{code, msg, data}` envelope, token
authentication cached in Redis, throttles on the pages' rate-limit counters, pagination,
permissions, and the schema helpers that document all of it.

The seckill gate's endpoints must not query PostgreSQL (README, "How a purchase flows"), so
authentication never loads the user row: it yields the user id (`request.auth.user_id`) and
a lazy user that only endpoints needing the row ever evaluate.
"""

import hashlib
from dataclasses import dataclass
from typing import Any

from django.contrib.auth import SESSION_KEY
from django.contrib.auth.models import AnonymousUser
from django.core.exceptions import ValidationError as DjangoValidationError
from django.http import Http404
from django.utils.functional import SimpleLazyObject
from django.utils.translation import gettext as _
from django_ratelimit.core import is_ratelimited
from drf_spectacular.extensions import OpenApiAuthenticationExtension
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, inline_serializer
from rest_framework import exceptions, serializers, status
from rest_framework.authentication import SessionAuthentication, TokenAuthentication
from rest_framework.authtoken.models import Token
from rest_framework.pagination import PageNumberPagination
from rest_framework.permissions import BasePermission
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.throttling import BaseThrottle

from seckill_site.codes import Code
from seckill_site.http import positive_int
from seckill_site.redis import client, keys

# --- the envelope ------------------------------------------------------------------------------


def api_ok(data: Any = None, *, status_code: int = status.HTTP_200_OK) -> Response:
    return Response({"code": 0, "msg": "success", "data": data}, status=status_code)


def api_fail(code: Code, msg: str | None = None, *, data: Any = None, status_code: int | None = None) -> Response:
    return Response({"code": code.code, "msg": msg or code.msg, "data": data}, status=status_code or code.status)


def _flatten(detail: Any, prefix: str = "") -> list[str]:
    """DRF's nested error detail as `field: message` lines, for a readable `msg`."""
    if isinstance(detail, dict):
        return [line for key, value in detail.items() for line in _flatten(value, f"{prefix}{key}: ")]
    if isinstance(detail, list):
        return [line for item in detail for line in _flatten(item, prefix)]
    return [f"{prefix}{detail}"]


def exception_handler(exc: Exception, context: dict) -> Response | None:
    """Every error the API raises answers in the pages' envelope with their codes.

    Anything not listed (database or Redis outages) propagates to
    ServiceUnavailableMiddleware, which answers 503 in the same envelope."""
    if isinstance(exc, Http404):
        return api_fail(Code.NOT_FOUND)
    if isinstance(exc, DjangoValidationError):
        detail = exc.message_dict if hasattr(exc, "error_dict") else {"non_field_errors": exc.messages}
        return api_fail(Code.BAD_REQUEST, "; ".join(_flatten(detail)), data=detail)
    if isinstance(exc, (exceptions.NotAuthenticated, exceptions.AuthenticationFailed)):
        # Always 401 (DRF answers 403 when the first authenticator has no challenge).
        msg = str(exc.detail) if isinstance(exc, exceptions.AuthenticationFailed) else None
        response = api_fail(Code.NOT_LOGGED_IN, msg)
        response["WWW-Authenticate"] = CachedTokenAuthentication.keyword
        return response
    if isinstance(exc, exceptions.PermissionDenied):
        custom = exc.detail != exceptions.PermissionDenied.default_detail
        return api_fail(Code.FORBIDDEN, str(exc.detail) if custom else None)
    if isinstance(exc, exceptions.NotFound):
        return api_fail(Code.NOT_FOUND, str(exc.detail))
    if isinstance(exc, exceptions.MethodNotAllowed):
        return api_fail(Code.METHOD_NOT_ALLOWED, str(exc.detail))
    if isinstance(exc, exceptions.Throttled):
        response = api_fail(Code.TOO_MANY_REQUESTS)
        if exc.wait is not None:
            response["Retry-After"] = str(int(exc.wait))
        return response
    if isinstance(exc, exceptions.ValidationError):
        return api_fail(Code.BAD_REQUEST, "; ".join(_flatten(exc.detail)), data=exc.detail)
    if isinstance(exc, exceptions.APIException):
        # Parse errors, unsupported media types, not acceptable: the client's fault, its status.
        return api_fail(Code.BAD_REQUEST, str(exc.detail), status_code=exc.status_code)
    return None


class EnvelopePagination(PageNumberPagination):
    page_size = 20
    page_size_query_param = "pageSize"
    max_page_size = 100

    def get_page_size(self, request: Request) -> int:
        # Refused rather than clamped: a client asking for 500 rows should learn it gets 100.
        raw = request.query_params.get(self.page_size_query_param)
        if raw is None:
            return self.page_size
        size = positive_int(raw)
        if size is None or size > self.max_page_size:
            message = _("pageSize must be a whole number from 1 to %(max)s") % {"max": self.max_page_size}
            raise exceptions.ValidationError({self.page_size_query_param: [message]})
        return size

    def get_page_number(self, request: Request, paginator) -> int | str:
        # DRF reads `?page=` (empty) as page 1; an empty or malformed page is a 404 like any bad page.
        raw = request.query_params.get(self.page_query_param)
        if raw is None:
            return 1
        if positive_int(raw) is None and raw not in self.last_page_strings:
            raise exceptions.NotFound(_("Invalid page."))
        return raw

    def get_paginated_response(self, data: list) -> Response:
        return api_ok(
            {
                "count": self.page.paginator.count,
                "next": self.get_next_link(),
                "previous": self.get_previous_link(),
                "results": data,
            }
        )

    def get_paginated_response_schema(self, schema: dict) -> dict:
        page = super().get_paginated_response_schema(schema)
        return {
            "type": "object",
            "required": ["code", "msg", "data"],
            "properties": {"code": {"type": "integer"}, "msg": {"type": "string"}, "data": page},
        }

    def get_schema_operation_parameters(self, view) -> list[dict]:
        parameters = super().get_schema_operation_parameters(view)
        for parameter in parameters:
            parameter["schema"].update({"minimum": 1})
            if parameter["name"] == self.page_size_query_param:
                parameter["schema"]["maximum"] = self.max_page_size
        return parameters


# --- tokens ------------------------------------------------------------------------------------

# token -> user id, cached in Redis so the gate's endpoints never read the token table.
# A revoked token is dropped from the cache at once; a deactivated user's cached token
# works for at most this long.
TOKEN_CACHE_TTL = 30 * 60
# An unknown token is remembered briefly, so a client looping over made-up tokens costs
# one Redis read each, not a PostgreSQL query.
TOKEN_MISSING_TTL = 60
_MISSING = b"0"


def _token_cache_key(key: str) -> str:
    # Hashed: a Redis dump or MONITOR never shows usable tokens.
    return keys.api_token(hashlib.sha256(key.encode()).hexdigest())


def api_token_issue(*, user_id: int) -> str:
    """The user's API token (one per user, shared by their devices), created on first login."""
    token, _created = Token.objects.get_or_create(user_id=user_id)
    client().set(_token_cache_key(token.key), user_id, ex=TOKEN_CACHE_TTL)
    return token.key


def api_token_revoke(*, key: str) -> None:
    """Log the token out everywhere: delete the row, then the cache entry (a request that
    reads the cache between the two may still pass; none can after)."""
    Token.objects.filter(key=key).delete()
    client().delete(_token_cache_key(key))


def api_token_user_id(key: str) -> int | None:
    """The user id a token stands for: Redis first, the token table on a miss."""
    cache_key = _token_cache_key(key)
    cached = client().get(cache_key)
    if cached == _MISSING:
        return None
    if cached is not None:
        return int(cached)
    user_id = Token.objects.filter(key=key, user__is_active=True).values_list("user_id", flat=True).first()
    if user_id is None:
        client().set(cache_key, _MISSING, ex=TOKEN_MISSING_TTL)
    else:
        client().set(cache_key, user_id, ex=TOKEN_CACHE_TTL)
    return user_id


# --- authentication ------------------------------------------------------------------------------


@dataclass(frozen=True)
class Credentials:
    """`request.auth` of an API request: who, without loading the user row."""

    user_id: int
    token: str | None = None  # None for a browser session


def _active_user(user_id: int):
    from users.models import User

    return User.objects.filter(pk=user_id, is_active=True).first() or AnonymousUser()


class CachedTokenAuthentication(TokenAuthentication):
    """`Authorization: Token <key>`, resolved to a user id from Redis (see api_token_user_id)."""

    def authenticate_credentials(self, key: str):
        if len(key) > 64 or not key.isascii():
            raise exceptions.AuthenticationFailed(_("invalid or revoked token"))
        user_id = api_token_user_id(key)
        if user_id is None:
            raise exceptions.AuthenticationFailed(_("invalid or revoked token"))
        return SimpleLazyObject(lambda: _active_user(user_id)), Credentials(user_id=user_id, token=key)


class SessionIdAuthentication(SessionAuthentication):
    """The browser's Redis session, read like the pages' gate does (seckill.views.session_user_id):
    the user id from the session, the row only if an endpoint asks for `request.user`.
    Unsafe methods need the CSRF token, as in DRF's SessionAuthentication."""

    def authenticate(self, request: Request):
        raw = request._request.session.get(SESSION_KEY)
        user_id = positive_int(raw)
        if user_id is None:
            return None
        self.enforce_csrf(request)
        return request._request.user, Credentials(user_id=user_id)


class CachedTokenScheme(OpenApiAuthenticationExtension):
    target_class = "seckill_site.api.CachedTokenAuthentication"
    name = "tokenAuth"

    def get_security_definition(self, auto_schema):
        return {
            "type": "apiKey",
            "in": "header",
            "name": "Authorization",
            "description": "`Token <key>`, as returned by POST /api/v1/users/login",
        }


class SessionIdScheme(OpenApiAuthenticationExtension):
    target_class = "seckill_site.api.SessionIdAuthentication"
    name = "cookieAuth"

    def get_security_definition(self, auto_schema):
        from django.conf import settings

        return {"type": "apiKey", "in": "cookie", "name": settings.SESSION_COOKIE_NAME}


def user_id_of(request: Request) -> int:
    """The caller's id on endpoints guarded by HasUserId (no database read)."""
    return request.auth.user_id


# --- permissions -------------------------------------------------------------------------------


class HasUserId(BasePermission):
    """Logged in, judged from the token or session alone: the gate's endpoints use this so
    they never load the user row."""

    def has_permission(self, request: Request, view) -> bool:
        return isinstance(request.auth, Credentials)


class IsShopper(BasePermission):
    """Logged in as an active user (loads the row: for endpoints that read the database anyway)."""

    def has_permission(self, request: Request, view) -> bool:
        return isinstance(request.auth, Credentials) and request.user.is_authenticated


class IsMerchant(BasePermission):
    """Merchants (goods.admin.is_merchant: staff in the Merchants group) and superusers, as in the admin."""

    message = _("merchants only")

    def has_permission(self, request: Request, view) -> bool:
        from goods.admin import is_merchant

        if not (isinstance(request.auth, Credentials) and request.user.is_authenticated):
            raise exceptions.NotAuthenticated()
        return request.user.is_superuser or is_merchant(request)


# --- throttles ---------------------------------------------------------------------------------


class RatelimitThrottle(BaseThrottle):
    """A DRF throttle on django-ratelimit's counters, with the pages' groups and keys: the
    page and the API share one budget per user (or IP, or mobile), so switching between
    them buys nothing; and ratelimit's atomic INCR is cheaper than DRF's read-modify-write
    of a timestamp list. Subclasses set `group`, `rate` and `key_of`."""

    group: str
    rate: str

    def key_of(self, request: Request) -> str | None:
        raise NotImplementedError

    def allow_request(self, request: Request, view) -> bool:
        value = self.key_of(request)
        if value is None:
            return True  # nobody to count (anonymous on an endpoint that refuses them anyway)
        return not is_ratelimited(
            request._request, group=self.group, key=lambda _group, _request: value, rate=self.rate, increment=True
        )

    def wait(self) -> float | None:
        count, period = self.rate.split("/")
        return float(int(period[:-1] or 1) * {"s": 1, "m": 60, "h": 3600, "d": 86400}[period[-1]])


class PerUserThrottle(RatelimitThrottle):
    def key_of(self, request: Request) -> str | None:
        # The pages key on str(session[SESSION_KEY]), i.e. the user id as text.
        return str(request.auth.user_id) if isinstance(request.auth, Credentials) else None


class PerIpThrottle(RatelimitThrottle):
    def key_of(self, request: Request) -> str | None:
        return request._request.META.get("REMOTE_ADDR", "")


class PerMobileThrottle(RatelimitThrottle):
    def key_of(self, request: Request) -> str | None:
        # The page keys on `post:mobile`; JSON bodies are not in request.POST, so read request.data.
        data = request.data
        mobile = data.get("mobile") if hasattr(data, "get") else None
        return mobile if isinstance(mobile, str) else ""


def throttle(base: type[RatelimitThrottle], group: str, rate: str) -> type[RatelimitThrottle]:
    return type(f"{base.__name__}_{group}", (base,), {"group": group, "rate": rate})


# --- schema helpers ----------------------------------------------------------------------------


class ErrorEnvelopeSerializer(serializers.Serializer):
    code = serializers.IntegerField(help_text="non-zero error code (seckill_site.codes)")
    msg = serializers.CharField(help_text="a message for people")
    data = serializers.JSONField(allow_null=True, help_text="field errors on a 400, else null")


def envelope(name: str, data: serializers.Field | serializers.Serializer | None = None) -> serializers.Serializer:
    """Schema of a success envelope with `data` of the given shape."""
    return inline_serializer(
        name=name,
        fields={
            "code": serializers.IntegerField(help_text="0 on success"),
            "msg": serializers.CharField(),
            "data": data if data is not None else serializers.JSONField(allow_null=True),
        },
    )


_ERROR_DESCRIPTIONS = {
    400: "bad input (`code` 500101), with field errors in `data`",
    401: "not logged in, or an invalid token (`code` 500210)",
    403: "forbidden (`code` 500211)",
    404: "no such object (`code` 500404); another merchant's or shopper's objects are 404 too",
    405: "method not allowed (`code` 500405)",
    409: "the order cannot do that in its state (`code` 500601)",
    429: "rate limited (`code` 500429); see Retry-After",
    503: "the shop is busy (`code` 500503 or 500506), retry shortly",
}


def errors(*statuses: int) -> dict[int, OpenApiResponse]:
    """Error responses of an operation, all in the envelope. 503 is added everywhere: any
    endpoint answers it while PostgreSQL or Redis is unreachable."""
    return {
        code: OpenApiResponse(ErrorEnvelopeSerializer, description=_ERROR_DESCRIPTIONS[code])
        for code in sorted({*statuses, 503})
    }


# Ids in URLs are read with seckill_site.http.positive_int: digits, at most 18 of them.
MAX_ID = 10**18 - 1


def id_parameter(name: str, description: str) -> OpenApiParameter:
    return OpenApiParameter(
        name, {"type": "integer", "minimum": 1, "maximum": MAX_ID}, OpenApiParameter.PATH, description=description
    )
