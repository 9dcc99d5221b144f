"""The JSON envelope every endpoint answers with, and small request helpers."""

from functools import wraps
from typing import Any

from django.http import HttpRequest, JsonResponse
from django.utils.translation import gettext as _

from seckill_site.codes import Code


def ok(data: Any = None) -> JsonResponse:
    return JsonResponse({"code": 0, "msg": "success", "data": data})


def fail(code: Code, msg: str | None = None, *, data: Any = None, status: int | None = None) -> JsonResponse:
    return JsonResponse(
        {"code": code.code, "msg": msg or code.msg, "data": data},
        status=status or code.status,
    )


def wants_json(request: HttpRequest) -> bool:
    accept = request.headers.get("Accept", "")
    return "application/json" in accept or request.headers.get("X-Requested-With") == "XMLHttpRequest"


def client_ip(request: HttpRequest) -> str:
    """The client's IP address, in one place: behind a trusted proxy this is where its
    forwarded address would be read."""
    return request.META.get("REMOTE_ADDR", "") or "unknown"


def positive_int(raw: Any) -> int | None:
    """Parse an id from user input: a positive integer that fits a bigint, else None."""
    if raw is None:
        return None
    text = str(raw).strip()
    if not text.isascii() or not text.isdigit() or len(text) > 18:
        return None
    value = int(text)
    return value if value > 0 else None


def allow(*methods: str):
    """Like require_http_methods, but answers a wrong method with the envelope and a clear message."""
    allowed = {method.upper() for method in methods}

    def decorate(view):
        @wraps(view)
        def wrapper(request: HttpRequest, *args, **kwargs):
            if request.method not in allowed:
                message = _("use %(methods)s for this endpoint") % {"methods": " / ".join(sorted(allowed))}
                response = fail(Code.METHOD_NOT_ALLOWED, message)
                response["Allow"] = ", ".join(sorted(allowed))
                return response
            return view(request, *args, **kwargs)

        return wrapper

    return decorate
