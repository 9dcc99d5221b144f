"""The JSON envelope every endpoint answers with, and small request helpers."""

import re
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


# Ranges of the PostgreSQL integer columns: every number from a client is checked against
# the column it ends in, so none reaches the database only to overflow there (a 500).
INT32_MAX = 2**31 - 1
# Ids are bigints; 18 digits keep every accepted id below 2**63 - 1.
ID_MAX = 10**18 - 1

# ASCII only: str.isdigit() and int() also take "²", "١٢٣" and other Unicode digits.
_INTEGER = re.compile(r"-?[0-9]{1,19}")


def parse_int(raw: Any, *, minimum: int, maximum: int) -> int | None:
    """The one parser of whole numbers from user input (query strings, forms, JSON, paths):
    optional minus sign and ASCII digits, within [minimum, maximum], else None. A JSON
    number is taken when it is an int (not a bool, not a float)."""
    if isinstance(raw, bool) or raw is None:
        return None
    if isinstance(raw, int):
        value = raw
    elif isinstance(raw, str):
        text = raw.strip()
        if _INTEGER.fullmatch(text) is None:
            return None
        value = int(text)
    else:
        return None
    return value if minimum <= value <= maximum else None


def positive_int(raw: Any) -> int | None:
    """Parse an id from user input: a positive integer that fits a bigint, else None."""
    return parse_int(raw, minimum=1, maximum=ID_MAX)


def client_ip(request: HttpRequest) -> str:
    """The client's IP address: what every per-IP limit counts on."""
    return request.META.get("REMOTE_ADDR", "")


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
