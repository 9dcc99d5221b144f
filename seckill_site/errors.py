"""Error handlers: JSON envelope for API callers, friendly pages for people."""

import logging

from django.db import InterfaceError, OperationalError
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.template.loader import render_to_string
from django.utils import translation
from django.utils.translation import gettext as _
from django.views.debug import SafeExceptionReporterFilter
from django_redis.exceptions import ConnectionInterrupted
from redis.exceptions import ClusterError, ReadOnlyError, RedisClusterException, TryAgainError
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import TimeoutError as RedisTimeoutError

from seckill_site.codes import Code, EnvelopeCode
from seckill_site.http import fail, wants_json

logger = logging.getLogger(__name__)

JSON_PATH_PREFIXES = ("/seckill/", "/goods/getDetails", "/api/", "/user/me")


def _json_path(path: str) -> bool:
    """A path whose answers are JSON, with or without a language prefix (/zh-hans/goods/...)."""
    language = translation.get_language_from_path(path)
    return (path.removeprefix(f"/{language}") if language else path).startswith(JSON_PATH_PREFIXES)


ERROR_TEMPLATE = "errors/error.html"

# A backing service briefly out of reach (PostgreSQL restarting, Redis down, a cluster failover,
# an open circuit breaker): answered 503 "busy, retry", never 401 or 500.
UNAVAILABLE = (
    OperationalError,
    InterfaceError,
    RedisConnectionError,
    RedisTimeoutError,
    ClusterError,
    TryAgainError,
    ReadOnlyError,
    RedisClusterException,
)


# What a Celery task waits out (autoretry_for) rather than drop its work.
OUTAGES = (*UNAVAILABLE, ConnectionInterrupted)


class SensitiveDataFilter(SafeExceptionReporterFilter):
    """Hides what is marked sensitive with DEBUG on too: no page shows a password or texted code."""

    def is_active(self, request: HttpRequest | None) -> bool:
        return True


def service_unavailable(error: BaseException) -> bool:
    """Is `error` one of UNAVAILABLE (django-redis wraps Redis errors in ConnectionInterrupted)?"""
    if isinstance(error, ConnectionInterrupted):
        error = error.__cause__ or error
    return isinstance(error, UNAVAILABLE)


def answer(request: HttpRequest, code: EnvelopeCode, msg: str | None = None) -> HttpResponse:
    if wants_json(request) or _json_path(request.path):
        return fail(code, msg)
    return render(request, ERROR_TEMPLATE, {"message": msg or code.msg, "status": code.status}, status=code.status)


def ratelimited(request: HttpRequest, exception: Exception | None = None) -> HttpResponse:
    return answer(request, Code.TOO_MANY_REQUESTS)


def bad_request(request: HttpRequest, exception: Exception | None = None) -> HttpResponse:
    return answer(request, Code.BAD_REQUEST)


def permission_denied(request: HttpRequest, exception: Exception | None = None) -> HttpResponse:
    return answer(request, Code.FORBIDDEN)


def page_not_found(request: HttpRequest, exception: Exception | None = None) -> HttpResponse:
    return answer(request, Code.NOT_FOUND)


def server_error(request: HttpRequest) -> HttpResponse:
    return answer(request, Code.SERVER_ERROR)


class ServiceUnavailableMiddleware:
    """Answers an outage (service_unavailable) anywhere below it with a 503 and Retry-After."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        try:
            return self.get_response(request)
        except Exception as error:
            if not service_unavailable(error):
                raise
            logger.warning("service unavailable on %s: %r", request.path, error)
            return unavailable_response(request)

    def process_exception(self, request: HttpRequest, exception: Exception) -> HttpResponse | None:
        if service_unavailable(exception):
            logger.warning("service unavailable on %s: %r", request.path, exception)
            return unavailable_response(request)
        return None


def unavailable_response(request: HttpRequest) -> HttpResponse:
    code = Code.SERVER_BUSY
    response: HttpResponse
    if wants_json(request) or _json_path(request.path):
        response = fail(code)
    else:
        # No request context: context processors would reach for the session, i.e. Redis.
        context = {"message": code.msg, "status": code.status}
        response = HttpResponse(render_to_string(ERROR_TEMPLATE, context), status=code.status)
    response["Retry-After"] = "5"
    return response


def csrf_failure(request: HttpRequest, reason: str = "") -> HttpResponse:
    message = _("Your form expired or the CSRF token is missing: reload the page and try again.")
    return answer(request, Code.FORBIDDEN, message)


class RequestBodyLimitMiddleware:
    """Answers 413, unread, a request whose Content-Length exceeds SECKILL_MAX_REQUEST_BYTES:
    Django's own limits leave out uploads, which are checked only once spooled to disk."""

    def __init__(self, get_response):
        from django.conf import settings

        self.get_response = get_response
        self.limit = settings.SECKILL_MAX_REQUEST_BYTES

    def __call__(self, request: HttpRequest) -> HttpResponse:
        try:
            declared = int(request.META.get("CONTENT_LENGTH") or 0)
        except ValueError:
            declared = 0  # Django reads a malformed length as no body at all
        if declared > self.limit:
            message = _("The request is larger than %(n)s MB.") % {"n": round(self.limit / 1024 / 1024, 1)}
            response = answer(request, Code.TOO_LARGE, message)
            response["Connection"] = "close"  # the unread body must not be taken for the next request
            return response
        return self.get_response(request)
