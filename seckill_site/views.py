from django.conf import settings
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import redirect
from django.utils.http import url_has_allowed_host_and_scheme
from django.utils.translation import check_for_language

from seckill_site import health
from seckill_site.http import allow
from seckill_site.metrics import metrics_allowed, metrics_response


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


@allow("GET")
def metrics(request: HttpRequest) -> HttpResponse:
    """Prometheus scrape endpoint: configured networks or the bearer token only (it names
    queues and volumes a stranger has no business reading)."""
    if not metrics_allowed(request):
        return HttpResponse("forbidden\n", status=403, content_type="text/plain")
    return metrics_response()


@allow("GET", "HEAD")
def healthz(request: HttpRequest) -> HttpResponse:
    """Liveness: the process answers HTTP. No dependency is asked, so an outage of PostgreSQL
    or Redis never makes an orchestrator restart healthy web processes."""
    return JsonResponse({"status": "ok"})


@allow("GET", "HEAD")
def readyz(request: HttpRequest) -> HttpResponse:
    """Readiness for the load balancer: 200 when PostgreSQL, Redis, the Lua scripts and the
    broker all answered within READINESS_TIMEOUT, else 503 naming the ones that did not."""
    results = health.readiness()
    failed = [result.name for result in results if not result.ok]
    body = {
        "status": "fail" if failed else "ok",
        "failed": failed,
        "checks": {
            result.name: {
                "ok": result.ok,
                "ms": round(result.milliseconds, 1),
                **({"error": result.error} if result.error else {}),
            }
            for result in results
        },
    }
    return JsonResponse(body, status=503 if failed else 200, headers={"Cache-Control": "no-store"})
