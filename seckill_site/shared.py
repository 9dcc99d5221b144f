"""Everybody's answers: pages and polls a CDN or Varnish may keep and give to anyone.

A shared answer is the same bytes for every visitor of its URL. Its language is the URL's
(`/zh-hans/goods/...` is Chinese, an unprefixed one is LANGUAGE_CODE), never a cookie's or an
Accept-Language header's, so an edge that keys on the URL cannot hand one visitor's language to
another; a visitor who chose another language with the switch is sent to its URL instead. It
reads nothing of the visitor (no session, user, CSRF token or message), carries
`Cache-Control: public` with the edge's lifetime and the surrogate keys a purge names
(seckill_site.edge), and SharedAnswerMiddleware makes sure no cookie leaves with it. What is
the shopper's own comes from JSON calls the page makes (docs/edge.md).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable
from functools import wraps

from django.conf import settings
from django.contrib.auth.models import AnonymousUser
from django.http import HttpRequest, HttpResponseBase, HttpResponseRedirect
from django.urls import LocalePrefixPattern, URLResolver, translate_url
from django.utils import translation
from django.utils.cache import patch_cache_control, patch_vary_headers

from seckill_site.edge import surrogate_keys

logger = logging.getLogger(__name__)

# A page the edge keeps until a purge, or this long at most; then it may serve the old copy
# while it fetches the new one, so nobody waits on a refresh at the opening second.
PAGE_SECONDS = 300
PAGE_STALE_SECONDS = 30
SALES_KEY = "sales"  # the list of sales


def sale_key(sale_id: int) -> str:
    """The surrogate key of everything that shows sale `sale_id`."""
    return f"sale-{sale_id}"


class PathLanguagePrefix(LocalePrefixPattern):
    """i18n_patterns' prefix, matched by the path alone: `zh-hans/` for Chinese, none for
    LANGUAGE_CODE, whatever language is active. Django's matches only the active language's
    prefix, which would make an unprefixed page a 404 for a visitor whose cookie says Chinese."""

    def __init__(self) -> None:
        super().__init__(prefix_default_language=False)

    def match(self, path: str):
        for code, _name in settings.LANGUAGES:
            if code != settings.LANGUAGE_CODE and path.startswith(f"{code}/"):
                return path[len(code) + 1 :], (), {}
        return path, (), {}


def language_patterns(*urls) -> list[URLResolver]:
    """Like i18n_patterns(*urls, prefix_default_language=False), matched by PathLanguagePrefix."""
    return [URLResolver(PathLanguagePrefix(), list(urls))]


def path_language(path: str) -> str:
    """The language a shared answer at `path` is in: its prefix's, else LANGUAGE_CODE."""
    return translation.get_language_from_path(path) or settings.LANGUAGE_CODE


def shared(
    *,
    seconds: int = PAGE_SECONDS,
    stale: int = PAGE_STALE_SECONDS,
    browser: int = 0,
    keys: Callable[..., Iterable[str]],
):
    """Make a view's answers everybody's (see the module docstring). `keys(**view_kwargs)` are
    the answer's surrogate keys; the edge keeps it `seconds` (s-maxage), serves it `stale`
    seconds more while it fetches a new one, and a browser keeps it `browser` seconds. Only a
    2xx answer is shared; any other stays as the view made it."""

    def decorate(view):
        @wraps(view)
        def wrapper(request: HttpRequest, *args, **kwargs) -> HttpResponseBase:
            chosen = _chosen_elsewhere(request)
            if chosen is not None:
                return _to_language(request, chosen)
            request.user = AnonymousUser()  # nothing of the visitor's reaches the bytes
            with translation.override(path_language(request.path_info)):
                response = view(request, *args, **kwargs)
                if hasattr(response, "render") and callable(response.render):
                    response = response.render()
                if 200 <= response.status_code < 300:
                    # A view may keep it shorter: until what it shows changes by itself.
                    until = getattr(response, "shared_seconds", None)
                    kept = seconds if until is None else max(1, min(seconds, until))
                    share(response, keys=keys(**kwargs), seconds=kept, stale=stale, browser=browser)
                response.headers["Content-Language"] = translation.get_language()
            return response

        wrapper.everybodys = True
        return wrapper

    return decorate


def is_shared_view(view: Callable) -> bool:
    """Whether `view` (or a view it wraps with functools.wraps) answers for everybody: shared()."""
    return getattr(view, "everybodys", False)


def _chosen_elsewhere(request: HttpRequest) -> str | None:
    """The language a visitor chose with the switch (its cookie), when an unprefixed shared URL
    is in another: their links are in it, but a bookmark or a link someone sent may not be."""
    if translation.get_language_from_path(request.path_info) is not None:
        return None
    chosen = request.COOKIES.get(settings.LANGUAGE_COOKIE_NAME)
    languages = dict(settings.LANGUAGES)
    return chosen if chosen != settings.LANGUAGE_CODE and chosen in languages else None


def _to_language(request: HttpRequest, language: str) -> HttpResponseBase:
    """The same page in `language`; the visitor's own answer, which no edge keeps (deploy/edge.vcl
    gives the same redirect itself, since it drops cookies before it looks a page up)."""
    response = HttpResponseRedirect(translate_url(request.get_full_path(), language))
    patch_cache_control(response, private=True)
    patch_vary_headers(response, ("Cookie",))
    return response


def share(response: HttpResponseBase, *, keys: Iterable[str], seconds: int, stale: int, browser: int) -> None:
    """Mark `response` everybody's: cache headers, surrogate keys, and the flag
    SharedAnswerMiddleware and the locale middleware read."""
    patch_cache_control(response, public=True, max_age=browser, s_maxage=seconds, stale_while_revalidate=stale)
    surrogate_keys(response, *keys)
    response.shared = True  # type: ignore[attr-defined]


def is_shared(response: HttpResponseBase) -> bool:
    return getattr(response, "shared", False)


class SharedAnswerMiddleware:
    """Outside the session, CSRF and message middleware: a cookie any of them set on a shared
    answer is taken off, because an edge would hand it to everybody who asks for that URL."""

    def __init__(self, get_response) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponseBase:
        response = self.get_response(request)
        if is_shared(response) and response.cookies:
            logger.warning("cookies %s taken off the shared answer to %s", sorted(response.cookies), request.path)
            response.cookies.clear()
        return response
