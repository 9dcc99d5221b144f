"""The cheaper middleware answer as the ones they replace: seckill_site.csp's header built once is
django-csp's own, with and without a nonce; seckill_site.locale picks Django's language and
sets Django's headers."""

import pytest
from csp.middleware import CSPMiddleware as DjangoCSPMiddleware
from django.http import HttpResponse
from django.middleware.locale import LocaleMiddleware as DjangoLocaleMiddleware
from django.test import RequestFactory
from django.utils import translation

from seckill_site.csp import CSPMiddleware
from seckill_site.locale import LocaleMiddleware

urlpatterns: list = []  # test_locale_is_djangos's site


def _header(middleware_class, *, nonce: bool, path: str = "/goods/getDetails/1") -> dict:
    def view(request):
        if nonce:
            str(request.csp_nonce)
        return HttpResponse("{}")

    request = RequestFactory().get(path)
    middleware = middleware_class(view)
    response = middleware(request)
    return {name: value for name, value in response.items() if "Content-Security-Policy" in name}


def test_built_once_equals_django_csp_without_a_nonce():
    ours = _header(CSPMiddleware, nonce=False)
    django_csp = _header(DjangoCSPMiddleware, nonce=False)
    # The same directives, in sorted order: django-csp's differs between processes.
    assert ours.keys() == django_csp.keys()
    for name, value in ours.items():
        assert value == "; ".join(sorted(django_csp[name].split("; ")))
    assert "'none'" in ours["Content-Security-Policy"] and "nonce-" not in ours["Content-Security-Policy"]


def test_a_nonce_still_gets_its_own_header():
    ours = _header(CSPMiddleware, nonce=True)["Content-Security-Policy"]
    assert "nonce-" in ours
    assert ours != _header(CSPMiddleware, nonce=False)["Content-Security-Policy"]


def test_asking_for_a_nonce_after_the_header_is_an_error():
    request = RequestFactory().get("/")
    CSPMiddleware(lambda request: HttpResponse("x"))(request)
    with pytest.raises(Exception, match="csp_nonce"):
        str(request.csp_nonce)


@pytest.mark.parametrize(
    "headers",
    [
        {},
        {"HTTP_ACCEPT_LANGUAGE": "zh-CN,zh;q=0.9"},
        {"HTTP_ACCEPT_LANGUAGE": "fr-FR,fr;q=0.9"},
        {"HTTP_ACCEPT_LANGUAGE": "zh-CN", "HTTP_COOKIE": "django_language=en"},
        {"HTTP_COOKIE": "django_language=zh-hans"},
        {"HTTP_COOKIE": "django_language=xx", "HTTP_ACCEPT_LANGUAGE": "zh-hans"},
    ],
)
def test_locale_is_djangos(headers, settings):
    """Where no language prefix decides (a path outside the shared pages' patterns), ours picks
    what Django's picks on a site without i18n patterns."""
    settings.ROOT_URLCONF = __name__  # its urlpatterns: none with a language prefix

    def view(request):
        response = HttpResponse(translation.gettext("sold out"))
        response["Vary"] = "Cookie"
        return response

    answers = []
    for middleware_class in (DjangoLocaleMiddleware, LocaleMiddleware):
        middleware = middleware_class(view)
        for _ in range(2):  # the second from the remembered pair
            request = RequestFactory().get("/seckill/result", **headers)
            response = middleware(request)
            answers.append((request.LANGUAGE_CODE, list(response.items()), response.content))
            translation.activate("en")
    assert all(answer == answers[0] for answer in answers), answers
