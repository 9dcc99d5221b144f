"""The users app's figures, read from Redis when /metrics is scraped (seckill_site.metrics)."""

from django.conf import settings
from prometheus_client.core import GaugeMetricFamily

from users.verification.services import sms_notice_hour_limit, sms_shop_hour_sent


def sms_figures() -> list[GaugeMetricFamily]:
    """This hour's text messages and the limits they count against, so an alert can warn while
    the codes' reserve is being used up, before the cap locks shoppers out of their codes."""
    sent = GaugeMetricFamily(
        "seckill_sms_shop_hour_messages", "Text messages the shop has sent this hour, codes and notices"
    )
    sent.add_metric([], sms_shop_hour_sent())
    limit = GaugeMetricFamily(
        "seckill_sms_shop_hour_limit",
        "Messages of an hour each sender may see counted: all (codes, SMS_SENDS_PER_HOUR) or notices",
        labels=["sender"],
    )
    limit.add_metric(["all"], settings.SMS_SENDS_PER_HOUR)
    limit.add_metric(["notices"], sms_notice_hour_limit())
    return [sent, limit]
