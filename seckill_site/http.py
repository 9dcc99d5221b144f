"""The JSON envelope every endpoint answers with, and small request helpers."""

import ipaddress
import re
import unicodedata
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import wraps
from typing import Any, TypeVar

from django.conf import settings
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect, JsonResponse
from django.utils.cache import patch_cache_control, patch_vary_headers
from django.utils.http import url_has_allowed_host_and_scheme
from django.utils.translation import gettext as _

from seckill_site.codes import Code, EnvelopeCode


@dataclass(frozen=True)
class Answer:
    """What an endpoint answers, before it is a response: code, message (the code's own when
    None), data and headers. page_answer and seckill_site.api.api_answer render the same body."""

    code: EnvelopeCode = Code.SUCCESS
    data: Any = None
    msg: str | None = None
    headers: Mapping[str, str] = field(default_factory=dict)
    # A successful answer that is not JSON (a captcha's picture or sound): its bytes and type.
    body: bytes | None = None
    content_type: str | None = None


def answer_headers_set(answer: Answer, response: HttpResponse) -> HttpResponse:
    for name, value in answer.headers.items():
        response[name] = value
    return response


def media_response(answer: Answer) -> HttpResponse | None:
    """The answer's bytes as they are (the same for the pages and the API), or None for JSON."""
    if answer.body is None:
        return None
    return answer_headers_set(answer, HttpResponse(answer.body, content_type=answer.content_type))


def page_answer(answer: Answer) -> HttpResponse:
    media = media_response(answer)
    if media is not None:
        return media
    response = ok(answer.data) if answer.code is Code.SUCCESS else fail(answer.code, answer.msg, data=answer.data)
    return answer_headers_set(answer, response)


# Seconds a public answer (the same for everybody) may be kept by a CDN, a browser or seckill.fastpath.
PUBLIC_SECONDS = 1
PublicResponse = TypeVar("PublicResponse", bound=HttpResponse)


def public_answer(response: PublicResponse, *, exact_until: float) -> PublicResponse:
    """Mark `response` as everybody's for PUBLIC_SECONDS; seckill.fastpath serves it again until
    then or `exact_until` (epoch seconds, shop clock: its next countdown change), if earlier."""
    patch_cache_control(response, public=True, max_age=PUBLIC_SECONDS)
    response.public_until = exact_until  # type: ignore[attr-defined]
    return response


def form_errors_message(form) -> str:
    """A form's errors as people read them, each under its field's label, never its name."""
    parts = []
    for name, errors in form.errors.items():
        label = form.fields[name].label if name in form.fields else None
        parts.append(f"{label}: {' '.join(errors)}" if label else " ".join(errors))
    return " ".join(parts)


def ok(data: Any = None) -> JsonResponse:
    return JsonResponse({"code": 0, "msg": "success", "data": data})


def fail(code: EnvelopeCode, msg: str | None = None, *, data: Any = None, status: int | None = None) -> JsonResponse:
    return JsonResponse(
        {"code": code.code, "msg": msg or code.msg, "data": data},
        status=status or code.status,
    )


# Set on a request whose answer wants_json chose: JSON or a page, by its headers.
NEGOTIATED = "seckill.negotiated"
NEGOTIATED_BY = ("Accept", "X-Requested-With")


def wants_json(request: HttpRequest) -> bool:
    """Does the client ask for JSON rather than a page? The answer then varies on the headers
    asked (NegotiatedVaryMiddleware says so)."""
    request.META[NEGOTIATED] = True
    accept = request.headers.get("Accept", "")
    return "application/json" in accept or request.headers.get("X-Requested-With") == "XMLHttpRequest"


class NegotiatedVaryMiddleware:
    """`Vary: Accept, X-Requested-With` on every answer wants_json chose. A URL that answers
    both a page and JSON is two answers to any cache, the browser's included: without it,
    Chromium's back button can show the JSON a page's script fetched from the page's URL."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        response = self.get_response(request)
        if request.META.get(NEGOTIATED):
            patch_vary_headers(response, NEGOTIATED_BY)
        return response


# Column ranges, so no number from a client overflows in PostgreSQL (a 500); ids stay below 2**63.
INT32_MAX = 2**31 - 1
ID_MAX = 10**18 - 1

# ASCII only: str.isdigit() and int() also take "²", "١٢٣" and other Unicode digits.
_INTEGER = re.compile(r"-?[0-9]{1,19}")


def parse_int(raw: Any, *, minimum: int, maximum: int) -> int | None:
    """The one parser of whole numbers from user input: an int (not a bool), or ASCII digits
    with an optional minus; None unless within [minimum, maximum]."""
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


def _address(text: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    try:
        return ipaddress.ip_address(text.strip())
    except ValueError:
        return None


def _trusted_networks() -> tuple[ipaddress.IPv4Network | ipaddress.IPv6Network, ...]:
    return tuple(ipaddress.ip_network(network, strict=False) for network in settings.SECKILL_TRUSTED_PROXIES)


def client_ip(request: HttpRequest) -> str:
    """The client's IP address, which every per-IP limit counts on: with SECKILL_TRUSTED_PROXIES,
    the first address outside them walking REMOTE_ADDR and X-Forwarded-For from the right; with
    SECKILL_TRUSTED_PROXY_COUNT n, the n-th from the right of X-Forwarded-For; else REMOTE_ADDR.
    A malformed hop ends the walk at the last good address, so a forged header moves no one."""
    remote = request.META.get("REMOTE_ADDR", "")
    networks, count = _trusted_networks(), settings.SECKILL_TRUSTED_PROXY_COUNT
    if not networks and not count:
        return remote
    forwarded = [hop.strip() for hop in request.META.get("HTTP_X_FORWARDED_FOR", "").split(",") if hop.strip()]
    chain = [*forwarded, remote]  # nearest hop last
    if networks:
        client = remote
        for hop in reversed(chain):
            address = _address(hop)
            if address is None:
                break
            client = str(address)
            if not any(address in network for network in networks):
                break
        return client
    if len(chain) <= count:
        return chain[0] if _address(chain[0]) else remote
    candidate = _address(chain[-(count + 1)])
    return str(candidate) if candidate is not None else remote


def next_path(raw: Any, fallback: str) -> str:
    """`raw` if it is a path on this site ("/orders/7?x=1"), else `fallback`: the one check of every
    `next`. Refused: anything a browser could read as a scheme or host ("//evil", "/\\evil"),
    control or space characters (URL parsers drop tabs), and bare words ("id")."""
    if not isinstance(raw, str):
        return fallback
    target = raw.strip()
    if not target.startswith("/") or target.startswith(("//", "/\\")):
        return fallback
    if any(unicodedata.category(character)[0] in ("C", "Z") for character in target):
        return fallback
    # No host may be named at all: an empty allow-list passes only scheme-less, host-less URLs.
    if not url_has_allowed_host_and_scheme(target, allowed_hosts=set()):
        return fallback
    return target


def redirect_target(raw: Any, fallback: str) -> HttpResponseRedirect:
    """A redirect to next_path(raw, fallback); django.shortcuts.redirect would reverse a word."""
    return HttpResponseRedirect(next_path(raw, fallback))


def ip_bucket(address: str) -> str:
    """What a per-IP limit counts for `address`: an IPv4 address (mapped ones too) itself, an
    IPv6 one by its /RATELIMIT_IPV6_PREFIX network, all of which one subscriber can send from."""
    parsed = _address(address)
    if parsed is None:
        return address
    if isinstance(parsed, ipaddress.IPv6Address):
        if parsed.ipv4_mapped is not None:
            return str(parsed.ipv4_mapped)
        return str(ipaddress.ip_network(f"{parsed}/{settings.RATELIMIT_IPV6_PREFIX}", strict=False))
    return str(parsed)


def client_bucket(request: HttpRequest) -> str:
    return ip_bucket(client_ip(request))


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
