"""A shopper's reminder of a sale (sales.reminders.services), asked for from the item page: JSON, for the
shopper's own session. The item page is everybody's, so its script reads and sets the state here."""

from django.http import Http404, HttpRequest, HttpResponse
from django.urls import reverse
from django.utils import translation
from django.utils.translation import gettext as _

from sales.codes import SaleCode
from sales.models import Sale
from sales.reminders import services as reminders
from seckill_site.codes import Code
from seckill_site.http import allow, fail, ok, positive_int
from seckill_site.shared import path_language, sale_key, shared

ON = {"1": True, "true": True, "on": True, "0": False, "false": False, "off": False}


@allow("GET", "POST")
def sale_reminder(request: HttpRequest, sale_id: str) -> HttpResponse:
    """GET: is the reminder on? POST `on=1|0`: turn it on or off. Answers {"on": bool}."""
    parsed = positive_int(sale_id)
    if parsed is None:
        return fail(Code.BAD_REQUEST, _("the sale id must be a positive integer"))
    if not request.user.is_authenticated:
        return fail(Code.NOT_LOGGED_IN)
    if request.method == "GET":
        if not Sale.objects.filter(pk=parsed).exists():
            return fail(Code.NOT_FOUND, _("no such sale"))
        return ok({"on": reminders.sale_reminder_on(user=request.user, sale_id=parsed)})
    on = ON.get(str(request.POST.get("on", "")).strip().lower())
    if on is None:
        return fail(Code.BAD_REQUEST, _("on must be 1 or 0"))
    try:
        state = reminders.sale_reminder_set(user=request.user, sale_id=parsed, on=on)
    except Sale.DoesNotExist:
        return fail(Code.NOT_FOUND, _("no such sale"))
    except reminders.ReminderRefused as refused:
        return fail(SaleCode.REMINDER_REFUSED, str(refused))
    return ok({"on": state})


@allow("GET")
@shared(keys=lambda sale_id: [sale_key(sale_id)])
def sale_calendar(request: HttpRequest, sale_id: str) -> HttpResponse:
    """The sale as an .ics file anyone may add to a calendar: everybody's, like the item page."""
    parsed = positive_int(sale_id)
    sale = Sale.objects.select_related("goods").filter(pk=parsed).first() if parsed is not None else None
    if sale is None:
        raise Http404(_("No such sale."))
    with translation.override(path_language(request.path_info)):
        url = request.build_absolute_uri(reverse("item:page", kwargs={"sale_id": sale.pk}))
        body = reminders.sale_calendar(sale=sale, url=url)
    response = HttpResponse(body, content_type="text/calendar; charset=utf-8")
    response["Content-Disposition"] = f'attachment; filename="sale-{sale.pk}.ics"'
    return response
