"""django-csp's middleware, with the header built once per process (docs/performance.md) where no
nonce or view override (csp.decorators) can change it; anything else takes django-csp's path."""

from __future__ import annotations

import http.client
from typing import TYPE_CHECKING

from csp.constants import HEADER, HEADER_REPORT_ONLY
from csp.middleware import CheckableLazyObject
from csp.middleware import CSPMiddleware as DjangoCSPMiddleware
from csp.utils import build_policy
from django.conf import settings

if TYPE_CHECKING:
    from django.http import HttpRequest, HttpResponseBase

# What a view may set on its response to change the policy (csp.decorators).
_OVERRIDES = ("_csp_config", "_csp_update", "_csp_replace", "_csp_config_ro", "_csp_update_ro", "_csp_replace_ro")


def _in_order(header: str) -> str:
    """The policy's directives sorted: django-csp's order follows a set's, so it differs between
    processes, and the edge repeats this header byte for byte (tools/edge_answers.py)."""
    return "; ".join(sorted(header.split("; "))) if header else header


class CSPMiddleware(DjangoCSPMiddleware):
    def __init__(self, get_response) -> None:
        super().__init__(get_response)
        policy = getattr(settings, "CONTENT_SECURITY_POLICY", None) or {}
        report_only = getattr(settings, "CONTENT_SECURITY_POLICY_REPORT_ONLY", None) or {}
        self._header = _in_order(build_policy())
        self._header_ro = _in_order(build_policy(report_only=True))
        self._excluded = tuple(policy.get("EXCLUDE_URL_PREFIXES", None) or ())
        self._excluded_ro = tuple(report_only.get("EXCLUDE_URL_PREFIXES", None) or ())

    def process_response(self, request: HttpRequest, response: HttpResponseBase) -> HttpResponseBase:
        if getattr(request, "_csp_nonce", None) is not None or any(
            getattr(response, name, None) is not None for name in _OVERRIDES
        ):
            return super().process_response(request, response)
        if settings.DEBUG and response.status_code in (http.client.INTERNAL_SERVER_ERROR, http.client.NOT_FOUND):
            return response
        path = request.path_info
        if self._header and HEADER not in response and not getattr(response, "_csp_exempt", False):
            if not path.startswith(self._excluded):
                response[HEADER] = self._header
        if self._header_ro and HEADER_REPORT_ONLY not in response and not getattr(response, "_csp_exempt_ro", False):
            if not path.startswith(self._excluded_ro):
                response[HEADER_REPORT_ONLY] = self._header_ro
        # As django-csp: once the header is written, asking for a nonce is an error, not a silent miss.
        request.csp_nonce = CheckableLazyObject(self._csp_nonce_post_response)  # type: ignore[attr-defined]
        return response
