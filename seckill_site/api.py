"""Shared pieces of the REST API (/api/v1/): the `{code, msg, data}` envelope, token
authentication cached in Redis, throttles on the pages' rate-limit counters, pagination,
permissions, and the schema helpers that document all of it.

The seckill gate's endpoints must not query PostgreSQL (README, "How a purchase flows"), so
authentication never loads the user row: it yields the user id (`request.auth.user_id`) and
a lazy user that only endpoints needing the row ever evaluate.
"""

import hashlib
import io
import re
import time
from dataclasses import dataclass
from datetime import UTC, datetime
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
from rest_framework.parsers import FormParser, JSONParser
from rest_framework.permissions import BasePermission
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.throttling import BaseThrottle

from seckill_site.codes import Code
from seckill_site.http import ID_MAX, client_bucket, positive_int
from seckill_site.ratelimit import rate_period
from seckill_site.redis import client, keys

# --- JSON bodies ---------------------------------------------------------------------------------

# A JSON body is read whole (Django's DATA_UPLOAD_MAX_MEMORY_SIZE does not apply to a
# stream DRF reads itself), so it is capped before parsing, and so is its nesting: Python's
# json module recurses once per level, and 200,000 "[" end in RecursionError (a 500).
JSON_MAX_BYTES = 256 * 1024
JSON_MAX_DEPTH = 32
_JSON_STRING = re.compile(rb'"(?:[^"\\]|\\.)*"')
_JSON_BRACKET = re.compile(rb"[\[\]{}]")


class BodyTooLarge(exceptions.APIException):
    status_code = status.HTTP_413_REQUEST_ENTITY_TOO_LARGE
    default_detail = _("the request body is too large")


def json_depth(body: bytes) -> int:
    """How deep a JSON text nests arrays and objects, without parsing it (no recursion)."""
    depth = deepest = 0
    for bracket in _JSON_BRACKET.findall(_JSON_STRING.sub(b"", body)):
        depth += 1 if bracket in b"[{" else -1
        deepest = max(deepest, depth)
    return deepest


def _read_capped(stream, limit: int, what: str) -> bytes:
    body = stream.read(limit + 1) if stream is not None else b""
    if len(body) > limit:
        raise BodyTooLarge(_("the %(what)s body is larger than %(n)s KiB") % {"what": what, "n": limit // 1024})
    return body


class BoundedJSONParser(JSONParser):
    """DRF's JSONParser behind a size and a depth limit checked before json.loads runs."""

    def parse(self, stream, media_type=None, parser_context=None):
        body = _read_capped(stream, JSON_MAX_BYTES, "JSON")
        if json_depth(body) > JSON_MAX_DEPTH:
            raise exceptions.ParseError(_("JSON nested deeper than %(n)s levels") % {"n": JSON_MAX_DEPTH})
        return super().parse(io.BytesIO(body), media_type, parser_context)


class BoundedFormParser(FormParser):
    """A form body (a browser posting to the API with its session) under the pages' limit:
    DRF reads it itself, so Django's DATA_UPLOAD_MAX_MEMORY_SIZE would not apply."""

    def parse(self, stream, media_type=None, parser_context=None):
        from django.conf import settings

        body = _read_capped(stream, settings.DATA_UPLOAD_MAX_MEMORY_SIZE, "form")
        return super().parse(io.BytesIO(body), media_type, parser_context)


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

# token -> "user id:expiry", cached in Redis so the gate's endpoints never read the token
# table. Revoking (logout, logout everywhere, password change, deactivation, an admin's edit:
# users.services.user_auth_revoke) deletes the rows and their cache entries at once.
TOKEN_CACHE_TTL = 30 * 60
# A token expires a fixed time after it was issued, however much it is used: log in again
# for a new one. A leaked token is worth at most this long.
TOKEN_LIFETIME = 30 * 24 * 60 * 60
# An unknown token is remembered briefly, so a client looping over made-up tokens costs
# one Redis read each, not a PostgreSQL query.
TOKEN_MISSING_TTL = 60
_MISSING = b"0"


def _token_cache_key(key: str) -> str:
    # Hashed: a Redis dump or MONITOR never shows usable tokens.
    return keys.api_token(hashlib.sha256(key.encode()).hexdigest())


def _token_expires(token_created) -> int:
    return int(token_created.timestamp()) + TOKEN_LIFETIME


def _token_cache_set(key: str, user_id: int, expires: int) -> None:
    ttl = min(TOKEN_CACHE_TTL, expires - int(time.time()))
    if ttl > 0:
        client().set(_token_cache_key(key), f"{user_id}:{expires}", ex=ttl)


def api_token_issue(*, user_id: int) -> str:
    """The user's API token (one per user, shared by their devices), created on first login
    and again once it has expired."""
    token = Token.objects.filter(user_id=user_id).first()
    if token is not None and _token_expires(token.created) <= time.time():
        api_token_revoke(key=token.key)
        token = None
    if token is None:
        token, _created = Token.objects.get_or_create(user_id=user_id)
    _token_cache_set(token.key, user_id, _token_expires(token.created))
    return token.key


def api_token_revoke(*, key: str) -> None:
    """Log the token out everywhere: delete the row, then the cache entry (a request that
    reads the cache between the two may still pass; none can after)."""
    Token.objects.filter(key=key).delete()
    client().delete(_token_cache_key(key))


def api_token_keys(*, user_id: int) -> list[str]:
    return list(Token.objects.filter(user_id=user_id).values_list("key", flat=True))


def api_token_cache_drop(*, keys: list[str]) -> None:
    """Forget these tokens' cache entries (their rows are gone already)."""
    for key in keys:  # one key per call: each lives in its own slot of a cluster
        client().delete(_token_cache_key(key))


def api_tokens_revoke(*, user_id: int) -> None:
    """Every token of the user, rows first, then their cache entries."""
    revoked = api_token_keys(user_id=user_id)
    Token.objects.filter(key__in=revoked).delete()
    api_token_cache_drop(keys=revoked)


def api_tokens_of(*, user_id: int) -> list[dict[str, Any]]:
    """The user's live tokens as they may see them: never the key, only its first characters."""
    tokens = Token.objects.filter(user_id=user_id).order_by("created")
    return [
        {
            "prefix": token.key[:6],
            "createdAt": token.created.isoformat(),
            "expiresAt": datetime.fromtimestamp(_token_expires(token.created), tz=UTC).isoformat(),
        }
        for token in tokens
        if _token_expires(token.created) > time.time()
    ]


def api_token_user_id(key: str) -> int | None:
    """The user id a live token stands for: Redis first (one read, expiry included), the
    token table on a miss."""
    cache_key = _token_cache_key(key)
    cached = client().get(cache_key)
    if cached == _MISSING:
        return None
    if cached is not None:
        user_id, _, expires = cached.partition(b":")
        if expires:
            return int(user_id) if int(expires) > time.time() else None
    row = Token.objects.filter(key=key, user__is_active=True).values_list("user_id", "created").first()
    if row is None or _token_expires(row[1]) <= time.time():
        client().set(cache_key, _MISSING, ex=TOKEN_MISSING_TTL)
        return None
    _token_cache_set(key, row[0], _token_expires(row[1]))
    return row[0]


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
    """Logged in as an active user (loads the row: for endpoints that read the database anyway).

    Credentials whose user is gone or deactivated are not logged in: 401, never a 403 (and
    never a view handed an anonymous user)."""

    def has_permission(self, request: Request, view) -> bool:
        if not (isinstance(request.auth, Credentials) and request.user.is_authenticated):
            raise exceptions.NotAuthenticated()
        return True


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
        return float(rate_period(self.rate))


class PerUserThrottle(RatelimitThrottle):
    def key_of(self, request: Request) -> str | None:
        # The pages key on str(session[SESSION_KEY]), i.e. the user id as text.
        return str(request.auth.user_id) if isinstance(request.auth, Credentials) else None


class PerIpThrottle(RatelimitThrottle):
    def key_of(self, request: Request) -> str | None:
        return client_bucket(request._request)


class PerMobileThrottle(RatelimitThrottle):
    def key_of(self, request: Request) -> str | None:
        # The account as the login form reads it (users.services.login_attempt_limited): spaces,
        # Unicode digits or a JSON number must not open a fresh bucket for the same account.
        from users.models import mobile_normalize

        data = request.data
        return mobile_normalize(data.get("mobile") if hasattr(data, "get") else None)


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
    400: "bad input (`code` 500101), with field errors in `data`; paying without an address of "
    "yours to ship to (`code` 500602)",
    401: "not logged in, or an invalid token (`code` 500210)",
    403: "forbidden (`code` 500211)",
    404: "no such object (`code` 500404); another merchant's or shopper's objects are 404 too",
    405: "method not allowed (`code` 500405)",
    409: "the order cannot do that in its state (`code` 500601); the address book is full (`code` 500610)",
    413: "the request body is too large (`code` 500101)",
    429: "rate limited (`code` 500429) or a per-sale limit reached (`code` 500430); see Retry-After",
    503: "the shop is busy (`code` 500503 or 500506), retry shortly",
}


def errors(*statuses: int) -> dict[int, OpenApiResponse]:
    """Error responses of an operation, all in the envelope. 503 is added everywhere: any
    endpoint answers it while PostgreSQL or Redis is unreachable; and 413, a body over the
    limits (BoundedJSONParser, DATA_UPLOAD_MAX_MEMORY_SIZE), which any endpoint refuses."""
    return {
        code: OpenApiResponse(ErrorEnvelopeSerializer, description=_ERROR_DESCRIPTIONS[code])
        for code in sorted({*statuses, 413, 503})
    }


# Ids in URLs are read with seckill_site.http.positive_int: digits, at most 10**18 - 1.
MAX_ID = ID_MAX


def id_parameter(name: str, description: str) -> OpenApiParameter:
    return OpenApiParameter(
        name, {"type": "integer", "minimum": 1, "maximum": MAX_ID}, OpenApiParameter.PATH, description=description
    )
