"""Reading the shop's pages: the item page's panels, and a time as the pages write it."""

import re

from django.conf import settings
from django.utils import timezone

from seckill_site.context import time_zone_label


def panels(page: str) -> dict[str, str]:
    """The panels the page carries for seckill.js (seckill.item.panels), by key, and "shown": the one
    it is served with."""
    found = dict(re.findall(r'<template data-panel-variant="([^"]+)">(.*?)</template>', page, re.S))
    found["shown"] = re.search(r'<div id="panel">(.*?)</div>\s*<form id="captcha-form"', page, re.S).group(1)
    return found


def written_at(at) -> str:
    """A time as the order pages write it (orders/_time.html): to the second, in the shop's
    time zone, named beside it."""
    local = timezone.localtime(at)
    return (
        f'<time datetime="{local.isoformat()}">{local:%Y-%m-%d %H:%M:%S}</time> '
        f'<abbr class="tz" title="{settings.TIME_ZONE}">{time_zone_label()}</abbr>'
    )
