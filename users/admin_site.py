"""The admin site: the merchant's tool, with the shop's own title, the shop's time zone named
where times are read, a language switch, and the shop's login limits: /admin/login/ counts
each attempt against the same per-IP and per-account budgets as the shop's login page and API
(a staff password is worth more to an attacker than a shopper's, and had no limit at all). Its
login and logout take `next` only when the shop's own check passes it (seckill_site.http.next_path).

seckill_site.apps.ShopAdminConfig names it as django.contrib.admin's site."""

from django.contrib import admin
from django.http import HttpRequest, HttpResponse
from django.template.response import TemplateResponse
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy

from seckill_site.admin import SecretsUnqueryable, shop_time_zone
from seckill_site.codes import Code
from seckill_site.errors import answer
from seckill_site.http import next_path
from users.services import login_attempt_limited


def _unsafe_next_dropped(request: HttpRequest) -> None:
    """Django's admin checks `next` for a foreign host, but lets through what the shop does not
    (a bare "//", which a browser cannot resolve; relative words): without it, its default."""
    for name in ("GET", "POST"):
        data = getattr(request, name)
        if "next" in data and not next_path(data["next"], ""):
            data = data.copy()
            data.pop("next")
            setattr(request, name, data)


class ShopAdminSite(admin.AdminSite):
    site_header = gettext_lazy("Seckill merchant centre")
    site_title = gettext_lazy("Seckill merchant centre")
    index_title = gettext_lazy("Your shop")
    # The app list down the left takes 300 of a 1280-pixel screen's width from the lists,
    # which then scroll sideways; the breadcrumbs and the home page lead everywhere it did.
    enable_nav_sidebar = False

    def register(self, model_or_iterable, admin_class=None, **options) -> None:
        """Every admin, the shop's and third parties' alike, with SecretsUnqueryable mixed in."""
        admin_class = admin_class or admin.ModelAdmin
        if not issubclass(admin_class, SecretsUnqueryable):
            admin_class = type(
                admin_class.__name__, (SecretsUnqueryable, admin_class), {"__module__": admin_class.__module__}
            )
        super().register(model_or_iterable, admin_class, **options)

    def each_context(self, request: HttpRequest) -> dict:
        return {**super().each_context(request), "shop_time_zone": shop_time_zone()}

    def login(self, request: HttpRequest, extra_context=None) -> HttpResponse:
        if request.method == "POST" and login_attempt_limited(request=request, mobile=request.POST.get("username")):
            return answer(request, Code.TOO_MANY_REQUESTS, _("Too many login attempts, wait a minute."))
        _unsafe_next_dropped(request)
        return super().login(request, extra_context)

    def logout(self, request: HttpRequest, extra_context=None) -> TemplateResponse:
        _unsafe_next_dropped(request)
        return super().logout(request, extra_context)
