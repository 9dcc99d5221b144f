"""The admin site with the shop's login limits: /admin/login/ counts each attempt against the
same per-IP and per-account budgets as the shop's login page and API (a staff password is
worth more to an attacker than a shopper's, and had no limit at all)."""

from django.contrib import admin
from django.http import HttpRequest, HttpResponse
from django.utils.translation import gettext as _

from seckill_site.codes import Code
from seckill_site.errors import answer


class ShopAdminSite(admin.AdminSite):
    def login(self, request: HttpRequest, extra_context=None) -> HttpResponse:
        from users.services import login_attempt_limited

        if request.method == "POST" and login_attempt_limited(request=request, mobile=request.POST.get("username")):
            return answer(request, Code.TOO_MANY_REQUESTS, _("Too many login attempts, wait a minute."))
        return super().login(request, extra_context)
