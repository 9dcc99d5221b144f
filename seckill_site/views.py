from django.conf import settings
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect, JsonResponse
from django.urls import translate_url
from django.utils.translation import check_for_language

from seckill_site import health
from seckill_site.http import allow, next_path
from seckill_site.metrics import metrics_allowed, metrics_response


@allow("GET")
def switch_language(request: HttpRequest) -> HttpResponse:
    """The language switch: a GET, unlike Django's set_language, so the shared pages need no
    CSRF token; a language preference is nothing to forge. Back to `next` in that language: a
    page's address names its language (/zh-hans/goods/..., /zh-hans/orders/...); an address with
    no language prefix (the admin) reads the cookie."""
    language = request.GET.get("language", "")
    chosen = language in dict(settings.LANGUAGES) and check_for_language(language)
    back = next_path(request.GET.get("next"), "/")
    response = HttpResponseRedirect(translate_url(back, language) if chosen else back)
    if chosen:
        # With the settings' cookie flags, as Django's set_language (production: Secure).
        response.set_cookie(
            settings.LANGUAGE_COOKIE_NAME,
            language,
            max_age=settings.LANGUAGE_COOKIE_AGE,
            path=settings.LANGUAGE_COOKIE_PATH,
            domain=settings.LANGUAGE_COOKIE_DOMAIN,
            secure=settings.LANGUAGE_COOKIE_SECURE,
            httponly=settings.LANGUAGE_COOKIE_HTTPONLY,
            samesite=settings.LANGUAGE_COOKIE_SAMESITE,
        )
    return response


@allow("GET")
def metrics(request: HttpRequest) -> HttpResponse:
    """Prometheus scrape endpoint, for metrics_allowed callers only."""
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
    """Readiness for the load balancer: 200 unless a check that makes the node unready failed
    (then 503 naming them); an advisory check's failure is listed under `degraded`. Timings
    and error texts only for metrics_allowed callers."""
    results = health.readiness()
    failed = health.unready(results)
    degraded = [result.name for result in results if not result.ok and result.name not in failed]
    body: dict[str, object] = {"status": "fail" if failed else "ok", "failed": failed}
    if degraded:
        body["degraded"] = degraded
    if metrics_allowed(request):
        body["checks"] = {
            result.name: {
                "ok": result.ok,
                "ms": round(result.milliseconds, 1),
                **({"error": result.error} if result.error else {}),
            }
            for result in results
        }
    return JsonResponse(body, status=503 if failed else 200, headers={"Cache-Control": "no-store"})
