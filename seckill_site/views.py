from django.conf import settings
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect
from django.utils.http import url_has_allowed_host_and_scheme
from django.utils.translation import check_for_language

from seckill_site.http import allow


@allow("GET")
def switch_language(request: HttpRequest) -> HttpResponse:
    """The language switch. A GET (unlike Django's set_language) so it works from the cached
    list page, which carries no CSRF token; a language preference is nothing to forge."""
    target = request.GET.get("next", "/")
    if not url_has_allowed_host_and_scheme(target, allowed_hosts={request.get_host()}):
        target = "/"
    response = redirect(target)
    language = request.GET.get("language", "")
    if language in dict(settings.LANGUAGES) and check_for_language(language):
        response.set_cookie(settings.LANGUAGE_COOKIE_NAME, language, max_age=365 * 24 * 3600, samesite="Lax")
    return response
