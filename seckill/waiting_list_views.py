"""`GET /seckill/waitingList/<sale>`: where the shopper stands on a made draw's waiting list,
and its public counter (seckill.waiting_list). Django answers a shopper's first poll, setting
their wait ticket; the fast path (seckill.fastpath.waitlist) answers the rest from Redis."""

from django.http import HttpRequest, HttpResponse
from django.utils.cache import add_never_cache_headers
from django.utils.translation import gettext as _

from orders.reoffer import waitlist_publish
from sales.selectors import sale_get
from seckill.waiting_list import waiting_list_body, waiting_list_data
from seckill_site.codes import Code
from seckill_site.http import allow, fail, positive_int
from waitingroom.wait_ticket import wait_ticket_set


@allow("GET")
def waiting_list(request: HttpRequest, sale_id: str) -> HttpResponse:
    """The list's answer; a list Redis does not hold is published again from the database
    first. 404 for a sale with no applied draw."""
    parsed = positive_int(sale_id)
    if parsed is None:
        return fail(Code.BAD_REQUEST, _("the sale must be a positive integer"))
    if sale_get(sale_id=parsed) is None:
        return fail(Code.NOT_FOUND, _("no such sale"))
    user_id = request.user.pk if request.user.is_authenticated else None
    data = waiting_list_data(parsed, user_id)
    if data is None and waitlist_publish(parsed):
        data = waiting_list_data(parsed, user_id)
    if data is None:
        return fail(Code.NOT_FOUND, _("this sale has no waiting list"))
    response = HttpResponse(waiting_list_body(data), content_type="application/json")
    if user_id is not None and data["state"] != "not_listed":
        wait_ticket_set(request, response, sale_id=parsed, user_id=user_id)
    add_never_cache_headers(response)
    return response
