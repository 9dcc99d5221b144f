"""Template context for every page."""

from django.conf import settings
from django.http import HttpRequest
from django.utils import timezone


def time_zone_label(now=None) -> str:
    """The shop's zone's offset from UTC at `now`, "UTC+08:00" (summer time included)."""
    offset = timezone.localtime(now).utcoffset()
    minutes = int(offset.total_seconds() // 60) if offset is not None else 0
    sign = "+" if minutes >= 0 else "-"
    return f"UTC{sign}{abs(minutes) // 60:02d}:{abs(minutes) % 60:02d}"


def time_zone(request: HttpRequest | None) -> dict:
    """Every time is shown in settings.TIME_ZONE, never the browser's: `tz_label`, `tz_name`."""
    return {"tz_label": time_zone_label(), "tz_name": settings.TIME_ZONE}
