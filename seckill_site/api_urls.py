"""/api/: the REST API (v1), its OpenAPI schema and docs page (sidecar static files, no CDN).
Each app lists its endpoints in its api_urls.py, included by name, so the site imports no app."""

from django.urls import include, path
from drf_spectacular.views import SpectacularAPIView, SpectacularSwaggerView

v1 = [
    path("", include("users.api_urls")),
    path("", include("goods.api_urls")),
    path("", include("sales.api_urls")),
    path("", include("seckill.api_urls")),
    path("", include("orders.api_urls")),
]

app_name = "api"
urlpatterns = [
    path("v1/", include(v1)),
    path("schema/", SpectacularAPIView.as_view(authentication_classes=[], permission_classes=[]), name="schema"),
    path("docs/", SpectacularSwaggerView.as_view(url_name="api:schema", authentication_classes=[]), name="docs"),
]
