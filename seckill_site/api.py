"""Shared pieces of the REST API (/api/v1/): body parsers, the `{code, msg, data}` envelope and
its exception handler, pagination, credentials, throttles and schema helpers. Authentication
leaves `Credentials` on `request.auth`, so the gate's endpoints never load the user row."""

import io
import re
from dataclasses import dataclass
from typing import Any, TypeVar

from django.core.exceptions import ValidationError as DjangoValidationError
from django.db.models import Model, QuerySet
from django.http import Http404, HttpResponse
from django.utils.translation import gettext as _
from django_ratelimit.core import is_ratelimited
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, inline_serializer
from rest_framework import exceptions, serializers, status
from rest_framework.pagination import PageNumberPagination
from rest_framework.parsers import FormParser, JSONParser
from rest_framework.permissions import BasePermission
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.throttling import BaseThrottle

from seckill_site.codes import Code, EnvelopeCode
from seckill_site.http import (
    ID_MAX,
    Answer,
    answer_headers_set,
    client_bucket,
    form_errors_message,
    media_response,
    positive_int,
)
from seckill_site.ratelimit import rate_period

# DRF reads a JSON body whole, past DATA_UPLOAD_MAX_MEMORY_SIZE, and json recurses once per
# level (deep nesting is a RecursionError, a 500): size and depth are capped before parsing.
JSON_MAX_BYTES = 256 * 1024
JSON_MAX_DEPTH = 32
_JSON_STRING = re.compile(rb'"(?:[^"\\]|\\.)*"')
_JSON_BRACKET = re.compile(rb"[\[\]{}]")

_Row = TypeVar("_Row", bound=Model)


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
    def parse(self, stream, media_type=None, parser_context=None):
        body = _read_capped(stream, JSON_MAX_BYTES, "JSON")
        if json_depth(body) > JSON_MAX_DEPTH:
            raise exceptions.ParseError(_("JSON nested deeper than %(n)s levels") % {"n": JSON_MAX_DEPTH})
        return super().parse(io.BytesIO(body), media_type, parser_context)


class BoundedFormParser(FormParser):
    """DRF's FormParser under DATA_UPLOAD_MAX_MEMORY_SIZE, which DRF's own read would skip."""

    def parse(self, stream, media_type=None, parser_context=None):
        from django.conf import settings

        body = _read_capped(stream, settings.DATA_UPLOAD_MAX_MEMORY_SIZE, "form")
        return super().parse(io.BytesIO(body), media_type, parser_context)


def api_ok(data: Any = None, *, status_code: int = status.HTTP_200_OK) -> Response:
    return Response({"code": 0, "msg": "success", "data": data}, status=status_code)


def api_fail(
    code: EnvelopeCode, msg: str | None = None, *, data: Any = None, status_code: int | None = None
) -> Response:
    return Response({"code": code.code, "msg": msg or code.msg, "data": data}, status=status_code or code.status)


def api_answer(answer: Answer) -> Response | HttpResponse:
    """seckill_site.http.Answer in the API's envelope (the pages render it with page_answer)."""
    media = media_response(answer)
    if media is not None:
        return media
    response = (
        api_ok(answer.data) if answer.code is Code.SUCCESS else api_fail(answer.code, answer.msg, data=answer.data)
    )
    return answer_headers_set(answer, response)


def api_form_errors(form) -> Response:
    """A form that did not validate: 400 with the message people read and each field's errors."""
    return api_fail(Code.BAD_REQUEST, form_errors_message(form), data=form.errors.get_json_data())


def request_fields(request: Request, *names: str) -> dict:
    """These fields of a JSON or form body, None where missing; {} for a body that is no object."""
    data = request.data
    return {name: data.get(name) for name in names} if hasattr(data, "get") else {}


def _flatten(detail: Any, prefix: str = "") -> list[str]:
    if isinstance(detail, dict):
        return [line for key, value in detail.items() for line in _flatten(value, f"{prefix}{key}: ")]
    if isinstance(detail, list):
        return [line for item in detail for line in _flatten(item, prefix)]
    return [f"{prefix}{detail}"]


def exception_handler(exc: Exception, context: dict) -> Response | None:
    """The envelope for every API error; None for the rest (outages: ServiceUnavailableMiddleware)."""
    if isinstance(exc, Http404):
        return api_fail(Code.NOT_FOUND)
    if isinstance(exc, DjangoValidationError):
        detail = exc.message_dict if hasattr(exc, "error_dict") else {"non_field_errors": exc.messages}
        return api_fail(Code.BAD_REQUEST, "; ".join(_flatten(detail)), data=detail)
    if isinstance(exc, (exceptions.NotAuthenticated, exceptions.AuthenticationFailed)):
        # Always 401 (DRF answers 403 when the first authenticator has no challenge).
        msg = str(exc.detail) if isinstance(exc, exceptions.AuthenticationFailed) else None
        response = api_fail(Code.NOT_LOGGED_IN, msg)
        response["WWW-Authenticate"] = "Token"  # users.authentication.CachedTokenAuthentication.keyword
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
        wait = getattr(exc, "wait", None)  # set by Throttled.__init__; the stubs miss it
        if wait is not None:
            response["Retry-After"] = str(int(wait))
        return response
    if isinstance(exc, exceptions.ValidationError):
        return api_fail(Code.BAD_REQUEST, "; ".join(_flatten(exc.detail)), data=exc.detail)
    if isinstance(exc, exceptions.APIException):
        # Parse errors, unsupported media types, not acceptable: the client's fault, its status.
        return api_fail(Code.BAD_REQUEST, str(exc.detail), status_code=exc.status_code)
    return None


def one_or_404(queryset: QuerySet[_Row], raw_id: str, message: str) -> _Row:
    """The row of `queryset` with this id (from the URL), or a 404 with `message`: an id that is
    no number, someone else's row and no row at all answer alike."""
    parsed = positive_int(raw_id)
    row = queryset.filter(pk=parsed).first() if parsed is not None else None
    if row is None:
        raise exceptions.NotFound(message)
    return row


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

    def get_paginated_response(self, data: Any) -> Response:
        assert self.page is not None
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


@dataclass(frozen=True)
class Credentials:
    """`request.auth` of an API request: who, without loading the user row."""

    user_id: int
    token: str | None = None  # None for a browser session


def user_id_of(request: Request) -> int:
    """The caller's id on endpoints guarded by HasUserId (no database read)."""
    return request.auth.user_id


class HasUserId(BasePermission):
    """Logged in, judged from the token or session alone (no user row loaded)."""

    def has_permission(self, request: Request, view) -> bool:
        return isinstance(request.auth, Credentials)


class RatelimitThrottle(BaseThrottle):
    """A DRF throttle on the pages' django-ratelimit counters, so a page and its API share one
    budget. Subclasses set `group`, `rate` and `key_of`."""

    group: str
    rate: str

    def key_of(self, request: Request) -> str | None:
        raise NotImplementedError

    def allow_request(self, request: Request, view) -> bool:
        value = self.key_of(request)
        if value is None:
            return True  # nobody to count (anonymous, refused by the endpoint anyway)
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


def throttle(base: type[RatelimitThrottle], group: str, rate: str) -> type[RatelimitThrottle]:
    return type(f"{base.__name__}_{group}", (base,), {"group": group, "rate": rate})


class ErrorEnvelopeSerializer(serializers.Serializer):
    code = serializers.IntegerField(help_text="non-zero error code (seckill_site.codes)")
    msg = serializers.CharField(help_text="a message for people")
    data = serializers.JSONField(allow_null=True, help_text="field errors on a 400, else null")  # type: ignore[assignment]


def envelope(name: str, data: serializers.Field | serializers.Serializer | None = None) -> serializers.Serializer:
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
    """Error responses of an operation, in the envelope; 413 and 503, which any endpoint may
    answer, are always added."""
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
