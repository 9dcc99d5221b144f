"""One way to write a point in time on every page: `{{ value|when }}` writes the date, year
and time in the page's language ("2 Dec 2026, 05:36" / "2026年12月2日 05:36"), or only the
time when it is today; `{{ value|when:"full" }}` always writes the date and year, for pages
cached for everyone, which may still be served after midnight."""

from datetime import datetime

from django import template
from django.utils import timezone
from django.utils.dateformat import format as date_format
from django.utils.translation import pgettext

register = template.Library()


@register.filter
def when(value: datetime | None, kind: str = "") -> str:
    """The time in the current time zone and language; "" for None."""
    if value is None:
        return ""
    local = timezone.localtime(value) if timezone.is_aware(value) else value
    if kind != "full" and local.date() == timezone.localdate():
        return date_format(local, pgettext("a time today, as a Django date format", "H:i"))
    return date_format(local, pgettext("a date and time, as a Django date format", "j M Y, H:i"))
