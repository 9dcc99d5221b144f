"""Error handlers: JSON envelope for API callers, friendly pages for people."""

from django.db import DatabaseError
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render

from seckill_site.codes import Code
from seckill_site.http import fail, wants_json

JSON_PATH_PREFIXES = ("/seckill/", "/goods/getDetails", "/api/", "/user/me")


def _answer(request: HttpRequest, code: Code, template: str, msg: str | None = None) -> HttpResponse:
    if wants_json(request) or request.path.startswith(JSON_PATH_PREFIXES):
        return fail(code, msg)
    return render(request, template, {"message": msg or code.msg}, status=code.status)


def ratelimited(request: HttpRequest, exception: Exception | None = None) -> HttpResponse:
    return _answer(request, Code.TOO_MANY_REQUESTS, "errors/429.html")


def bad_request(request: HttpRequest, exception: Exception | None = None) -> HttpResponse:
    return _answer(request, Code.BAD_REQUEST, "errors/400.html")


def permission_denied(request: HttpRequest, exception: Exception | None = None) -> HttpResponse:
    return _answer(request, Code.FORBIDDEN, "errors/403.html")


def page_not_found(request: HttpRequest, exception: Exception | None = None) -> HttpResponse:
    return _answer(request, Code.NOT_FOUND, "errors/404.html")


def server_error(request: HttpRequest) -> HttpResponse:
    return _answer(request, Code.SERVER_ERROR, "errors/500.html")


class DatabaseUnavailableMiddleware:
    """A database outage answers a friendly 503 instead of a traceback; the next request
    after the database returns works again because CONN_HEALTH_CHECKS drops dead connections."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        return self.get_response(request)

    def process_exception(self, request: HttpRequest, exception: Exception) -> HttpResponse | None:
        if isinstance(exception, DatabaseError) and _is_connection_problem(exception):
            return _answer(request, Code.SERVER_BUSY, "errors/503.html")
        return None


def _is_connection_problem(exception: DatabaseError) -> bool:
    from django.db import InterfaceError, OperationalError

    return isinstance(exception, (OperationalError, InterfaceError))


def csrf_failure(request: HttpRequest, reason: str = "") -> HttpResponse:
    message = "Your form expired or the CSRF token is missing: reload the page and try again."
    return _answer(request, Code.FORBIDDEN, "errors/403.html", message)
