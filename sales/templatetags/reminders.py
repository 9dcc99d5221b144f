"""The reminder's lead time for the item page's "Remind me" (templates/seckill/remind.html)."""

from django import template
from django.conf import settings

register = template.Library()


@register.simple_tag
def reminder_lead_minutes() -> int:
    return max(1, settings.SALE_REMINDER_LEAD_SECONDS // 60)
