"""The shop's LocaleMiddleware: a language prefix in the path decides, and without one the
language is worked out once per (language cookie, Accept-Language) pair, not parsed again on
every request (docs/performance.md)."""

from __future__ import annotations

from collections.abc import Callable

from django.conf import settings
from django.conf.urls.i18n import is_language_prefix_patterns_used
from django.core.signals import setting_changed
from django.dispatch import receiver
from django.http import HttpRequest, HttpResponseBase, HttpResponseRedirect
from django.middleware.locale import LocaleMiddleware as DjangoLocaleMiddleware
from django.urls import translate_url
from django.utils import translation
from django.utils.cache import patch_cache_control, patch_vary_headers

from seckill_site.shared import is_shared, is_shared_view

LANGUAGES_MAX = 1024  # distinct header pairs remembered, then forgotten all at once
_languages: dict[tuple[str | None, str], str] = {}


class _Headers:
    """The two headers get_language_from_request reads, for seckill.fastpath (below Django)."""

    path_info = "/"

    def __init__(self, cookie: str | None, accept: str) -> None:
        self.COOKIES = {} if cookie is None else {settings.LANGUAGE_COOKIE_NAME: cookie}
        self.META = {"HTTP_ACCEPT_LANGUAGE": accept}


@receiver(setting_changed)
def _languages_forget(*, setting: str, **_kwargs) -> None:
    """The memo holds answers of the language settings (tests override them)."""
    if setting in ("LANGUAGE_CODE", "LANGUAGES", "LANGUAGE_COOKIE_NAME"):
        _languages.clear()


def language_for(cookie: str | None, accept: str) -> str:
    """The language Django picks without URL prefixes (cookie, Accept-Language, LANGUAGE_CODE)."""
    language = _languages.get((cookie, accept))
    if language is None:
        language = translation.get_language_from_request(_Headers(cookie, accept))  # type: ignore[arg-type]
        if len(_languages) >= LANGUAGES_MAX:
            _languages.clear()
        _languages[(cookie, accept)] = language
    return language


def page_in_language(request: HttpRequest, view: Callable, language: str) -> HttpResponseBase | None:
    """A browser opening a shopper's own page at its unprefixed address while its visitor reads
    `language`, another than LANGUAGE_CODE: a redirect to the page (`view`, its view) under that
    language's prefix, so that the address, the page and its links say one language. Everybody's pages
    (seckill_site.shared) are left alone: an edge drops Accept-Language before it looks them
    up, so they offer the other language in the browser instead (static/js/language-offer.js).
    A script's request (no text/html in Accept), a form's POST and an address with no language
    prefix (the admin, the API) are answered where they are."""
    if language == settings.LANGUAGE_CODE or request.method not in ("GET", "HEAD"):
        return None
    if "text/html" not in request.headers.get("Accept", ""):
        return None
    here = request.get_full_path()
    there = translate_url(here, language)
    if is_shared_view(view) or there == here:
        return None
    response = HttpResponseRedirect(there)
    patch_cache_control(response, private=True)
    patch_vary_headers(response, ("Accept-Language", "Cookie"))
    return response


class LocaleMiddleware(DjangoLocaleMiddleware):
    """The language: a path's prefix where it has one (/zh-hans/goods/..., i18n patterns made
    with seckill_site.shared.language_patterns), else the visitor's (cookie, Accept-Language),
    and then a browser is sent to the page under that language's prefix (page_in_language).
    A shared answer (seckill_site.shared) is in its URL's language, so it does not vary on
    Accept-Language; every other answer does."""

    def __init__(self, get_response) -> None:
        super().__init__(get_response)
        self._prefixed = is_language_prefix_patterns_used(settings.ROOT_URLCONF)[0]

    def process_request(self, request: HttpRequest) -> None:
        if getattr(request, "urlconf", None) is not None:
            return super().process_request(request)
        language = translation.get_language_from_path(request.path_info) if self._prefixed else None
        if language is None:
            language = language_for(
                request.COOKIES.get(settings.LANGUAGE_COOKIE_NAME), request.META.get("HTTP_ACCEPT_LANGUAGE", "")
            )
        translation.activate(language)
        request.LANGUAGE_CODE = translation.get_language()
        return None

    def process_view(self, request: HttpRequest, view: Callable, *_args) -> HttpResponseBase | None:
        if getattr(request, "urlconf", None) is not None or not self._prefixed:
            return None
        if translation.get_language_from_path(request.path_info) is not None:
            return None
        return page_in_language(request, view, request.LANGUAGE_CODE)

    def process_response(self, request: HttpRequest, response: HttpResponseBase) -> HttpResponseBase:
        if getattr(request, "urlconf", None) is not None:
            return super().process_response(request, response)
        if not is_shared(response):
            patch_vary_headers(response, ("Accept-Language",))
        response.headers.setdefault("Content-Language", translation.get_language())
        return response
