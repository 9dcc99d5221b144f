"""The providers' notifications, at /payments/<name>/<its notify_endpoint>. No session, no
CSRF token: the provider's signature is the credential. A notification that fails any check
gets a 400, a log line and a count, and changes nothing; one for a provider that is off, a 404."""

import logging

from django.http import HttpRequest, HttpResponse
from django.views.decorators.csrf import csrf_exempt

from orders.payments.metrics import NOTICES
from orders.payments.providers import NoSuchProvider, NoticeRefused, provider
from orders.payments.services import notice_receive
from seckill_site.http import allow

logger = logging.getLogger(__name__)

# A notification is a short form or a JSON event of a few kilobytes.
NOTICE_MAX_BYTES = 64 * 1024


@csrf_exempt
@allow("POST")
def notice_post(request: HttpRequest, provider_name: str, endpoint: str) -> HttpResponse:
    try:
        chosen = provider(provider_name)
    except NoSuchProvider:
        return HttpResponse(status=404)
    if not chosen.configured() or endpoint != chosen.notify_endpoint:
        return HttpResponse(status=404)
    if int(request.headers.get("Content-Length") or 0) > NOTICE_MAX_BYTES:
        return HttpResponse("too large", status=413, content_type="text/plain")
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
