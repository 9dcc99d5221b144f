"""Template context for every page."""

from django.conf import settings
from django.http import HttpRequest
from django.utils import timezone


def time_zone_label(now=None) -> str:
    """The shop's zone as people read it beside a time, "UTC+08:00" (the offset now, so a zone
    with summer time shows the right one); the zone's name (settings.TIME_ZONE) goes beside it."""
    offset = timezone.localtime(now).utcoffset()
    minutes = int(offset.total_seconds() // 60) if offset is not None else 0
    sign = "+" if minutes >= 0 else "-"
    return f"UTC{sign}{abs(minutes) // 60:02d}:{abs(minutes) % 60:02d}"


def time_zone(request: HttpRequest | None) -> dict:
    """One time zone for the whole shop: every time is shown in settings.TIME_ZONE (never the
    browser's), named where it matters with `tz_label` and `tz_name`."""
    return {"tz_label": time_zone_label(), "tz_name": settings.TIME_ZONE}
