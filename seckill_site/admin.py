"""The admin site: the merchant's tool, with the shop's own title, the shop's time zone named
where times are read, a language switch, and the shop's login limits: /admin/login/ counts
each attempt against the same per-IP and per-account budgets as the shop's login page and API
(a staff password is worth more to an attacker than a shopper's, and had no limit at all). Its
login and logout take `next` only when the shop's own check passes it (seckill_site.http.next_path)."""

from django.contrib import admin
from django.http import HttpRequest, HttpResponse
from django.templatetags.static import static
from django.utils import timezone
from django.utils.html import format_html
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy, gettext_noop

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


# What Django 5.2's admin says (to screen readers, or on the add-user page) that its own
# zh-Hans catalogue does not translate yet: marked here so makemessages keeps them in this
# project's catalogue, which Django reads before its own.
DJANGO_ADMIN_WORDS = (
    gettext_noop("Model name"),
    gettext_noop("Add link"),
    gettext_noop("Change or view list link"),
    gettext_noop("After you’ve created a user, you’ll be able to edit more user options."),
    gettext_noop("Error:"),  # the title of a form sent back with errors
)


def yes_no(value: bool) -> str:
    """Django's tick or cross icon, named in the merchant's language (Django's own list
    cells call them "True" and "False" in English, to every screen reader)."""
    icon = static(f"admin/img/icon-{'yes' if value else 'no'}.svg")
    return format_html('<img src="{}" alt="{}">', icon, _("Yes") if value else _("No"))


def shop_time_zone() -> dict[str, str]:
    """The zone every time in the shop and the admin is shown in (settings.TIME_ZONE), with
    its current offset from UTC: "Asia/Shanghai", "UTC+08:00"."""
    offset = timezone.localtime().strftime("%z")  # "+0800"
    return {"name": timezone.get_current_timezone_name(), "offset": f"UTC{offset[:3]}:{offset[3:]}"}


class ShopAdminSite(admin.AdminSite):
    site_header = gettext_lazy("Seckill merchant centre")
    site_title = gettext_lazy("Seckill merchant centre")
    index_title = gettext_lazy("Your shop")
    # The app list down the left takes 300 of a 1280-pixel screen's width from the lists,
    # which then scroll sideways; the breadcrumbs and the home page lead everywhere it did.
    enable_nav_sidebar = False

    def each_context(self, request: HttpRequest) -> dict:
        return {**super().each_context(request), "shop_time_zone": shop_time_zone()}

    def login(self, request: HttpRequest, extra_context=None) -> HttpResponse:
        from users.services import login_attempt_limited

        if request.method == "POST" and login_attempt_limited(request=request, mobile=request.POST.get("username")):
            return answer(request, Code.TOO_MANY_REQUESTS, _("Too many login attempts, wait a minute."))
        _unsafe_next_dropped(request)
        return super().login(request, extra_context)

    def logout(self, request: HttpRequest, extra_context=None) -> HttpResponse:
        _unsafe_next_dropped(request)
        return super().logout(request, extra_context)
