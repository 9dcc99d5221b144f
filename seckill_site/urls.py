from django.conf import settings
from django.contrib import admin
from django.urls import include, path, re_path
from django.views.generic import RedirectView
from django.views.i18n import JavaScriptCatalog
from django.views.static import serve

from seckill_site.shared import language_patterns, shared
from seckill_site.views import healthz, metrics, readyz, switch_language

urlpatterns = [
    path("healthz", healthz, name="healthz"),
    path("readyz", readyz, name="readyz"),
    path("metrics", metrics, name="metrics"),
    # The list in the visitor's language (cookie, Accept-Language): the one answer that picks it.
    path("", RedirectView.as_view(pattern_name="goods:list", permanent=False)),
    # Browsers ask for /favicon.ico on pages without a <link rel="icon"> (the admin's).
    path("favicon.ico", RedirectView.as_view(url=f"{settings.STATIC_URL}favicon.svg", permanent=True)),
    # Each page under each language's prefix: everybody's pages and poll, in the URL's language
    # (seckill_site.shared), and the shopper's own, in the URL's language where it names one and
    # else the visitor's (seckill_site.locale).
    *language_patterns(
        path("goods/detail/", include("seckill.item.urls")),
        path("goods/", include("sales.urls")),
        path("waiting-room/", include("waitingroom.urls")),
        # The pages' scripts' words, in the page's language whatever the visitor's cookie says.
        path("jsi18n/", shared(keys=lambda: ["jsi18n"])(JavaScriptCatalog.as_view()), name="javascript-catalog"),
        path("user/", include("users.urls")),
        path("orders/", include("orders.urls")),
    ),
    path("user/", include("users.data_urls")),
    path("reminders/", include("sales.reminders.urls")),
    path("seckill/", include("seckill.urls")),
    path("waiting-room/", include("waitingroom.status_urls")),
    path("payments/", include("orders.payments.urls")),
    path("api/", include("seckill_site.api_urls")),
    # A merchant's bookmarks from before the sale model was named Sale, and from before the
    # sale and its draw, stock log and reminders moved from the goods app to their own.
    re_path(
        r"^admin/goods/(?:seckillgoods|sale)/(?P<rest>.*)$",
        RedirectView.as_view(url="/admin/sales/sale/%(rest)s", permanent=True, query_string=True),
    ),
    re_path(
        r"^admin/goods/(?P<model>saledraw|stockaudit|salereminder)/(?P<rest>.*)$",
        RedirectView.as_view(url="/admin/sales/%(model)s/%(rest)s", permanent=True, query_string=True),
    ),
    path("admin/", admin.site.urls),
    path("language", switch_language, name="switch-language"),
]

if settings.DEBUG or settings.SERVE_MEDIA:
    # Product images in development and the demo; production serves /media from the proxy.
    urlpatterns += [path(f"{settings.MEDIA_URL.strip('/')}/<path:path>", serve, {"document_root": settings.MEDIA_ROOT})]

handler400 = "seckill_site.errors.bad_request"
handler403 = "seckill_site.errors.permission_denied"
handler404 = "seckill_site.errors.page_not_found"
handler500 = "seckill_site.errors.server_error"
