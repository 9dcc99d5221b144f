"""The admin site with the shop's login limits: /admin/login/ counts each attempt against the
same per-IP and per-account budgets as the shop's login page and API (a staff password is
worth more to an attacker than a shopper's, and had no limit at all). Its login and logout
take `next` only when the shop's own check passes it (seckill_site.http.next_path)."""

from django.contrib import admin
from django.http import HttpRequest, HttpResponse
from django.utils.translation import gettext as _

from seckill_site.codes import Code
from seckill_site.errors import answer
from seckill_site.http import next_path


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
    def login(self, request: HttpRequest, extra_context=None) -> HttpResponse:
        from users.services import login_attempt_limited

        if request.method == "POST" and login_attempt_limited(request=request, mobile=request.POST.get("username")):
            return answer(request, Code.TOO_MANY_REQUESTS, _("Too many login attempts, wait a minute."))
        _unsafe_next_dropped(request)
        return super().login(request, extra_context)

    def logout(self, request: HttpRequest, extra_context=None) -> HttpResponse:
        _unsafe_next_dropped(request)
        return super().logout(request, extra_context)
