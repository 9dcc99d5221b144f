"""What every app's admin shows the same way: times in the shop's zone, money, yes and no in the
merchant's language. (The admin site itself, with its login limits, is users.admin_site.)"""

from django.templatetags.static import static
from django.utils import timezone
from django.utils.html import format_html
from django.utils.translation import gettext as _
from django.utils.translation import gettext_noop

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


# Times in lists: the shop's zone, one compact form for every language (the admin's own
# format, "Nov. 24, 2026, 6:16 p.m.", takes twice the width).
LIST_TIME = "%Y-%m-%d %H:%M"


def list_time(value) -> str:
    return timezone.localtime(value).strftime(LIST_TIME) if value else "-"


def money(value) -> str:
    return f"¥{value:,.2f}" if value is not None else "-"


def shop_time_zone() -> dict[str, str]:
    """The zone every time in the shop and the admin is shown in (settings.TIME_ZONE), with
    its current offset from UTC: "Asia/Shanghai", "UTC+08:00"."""
    offset = timezone.localtime().strftime("%z")  # "+0800"
    return {"name": timezone.get_current_timezone_name(), "offset": f"UTC{offset[:3]}:{offset[3:]}"}
