"""The providers' notifications: Alipay's async notify and Stripe's webhook. No session, no
CSRF token: the provider's signature is the credential. A notification that fails any check
gets a 400, a log line and a count, and changes nothing."""

import logging

from django.http import HttpRequest, HttpResponse
from django.views.decorators.csrf import csrf_exempt

from orders.metrics import NOTICES
from orders.models import Provider
from orders.payments.providers import NoticeRefused, provider, providers_enabled
from orders.payments.services import notice_receive
from seckill_site.http import allow

logger = logging.getLogger(__name__)

# Alipay's notify is a short form; Stripe's events are a few kilobytes.
NOTICE_MAX_BYTES = 64 * 1024


def _receive(request: HttpRequest, provider_name: str) -> HttpResponse:
    if provider_name not in providers_enabled():
        return HttpResponse(status=404)
    if int(request.headers.get("Content-Length") or 0) > NOTICE_MAX_BYTES:
        return HttpResponse("too large", status=413, content_type="text/plain")
    chosen = provider(provider_name)
    try:
        notice = chosen.notice(request)
        outcome = notice_receive(provider_name=provider_name, notice=notice)
    except NoticeRefused as refusal:
        NOTICES.labels(provider_name, f"refused: {refusal.reason}").inc()
        logger.warning(
            "refused a %s notification (%s) from %s", provider_name, refusal.reason, request.META.get("REMOTE_ADDR")
        )
        return HttpResponse(f"refused: {refusal.reason}", status=400, content_type="text/plain")
    logger.info("%s notification %s: %s", provider_name, notice.event_id, outcome)
    return chosen.acknowledgement()


@csrf_exempt
@allow("POST")
def alipay_notify(request: HttpRequest) -> HttpResponse:
    return _receive(request, Provider.ALIPAY)


@csrf_exempt
@allow("POST")
def stripe_webhook(request: HttpRequest) -> HttpResponse:
    return _receive(request, Provider.STRIPE)
