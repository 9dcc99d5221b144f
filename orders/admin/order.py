import csv

from django.conf import settings
from django.contrib import admin, messages
from django.core.exceptions import PermissionDenied
from django.http import Http404, HttpResponseRedirect, JsonResponse, StreamingHttpResponse
from django.template.response import TemplateResponse
from django.urls import path, reverse
from django.utils import timezone
from django.utils.html import format_html
from django.utils.text import capfirst
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy, ngettext

from orders.contact.admin import ContactAdmin, MessagesToAnswerFilter
from orders.fulfilment.admin import RefundRequestFilter, ToShipFilter
from orders.fulfilment.returns_admin import ReturnRequestFilter
from orders.fulfilment.selectors import orders_to_ship
from orders.models import PAID_STATUSES, Order, OrderEvent, OrderStatus, PaymentStatus, Refund
from orders.payments.admin import PaymentInline, RefundForm, RefundInline, amount_with_currency, person
from orders.payments.closing import order_cancel_by_merchant
from orders.payments.providers import provider_label
from orders.payments.refunds import order_refund
from orders.selectors import (
    order_address,
    order_shipment,
    orders_csv_rows,
    sale_figures,
    sale_live_cards,
    sales_with_order_figures,
)
from orders.services import OrderStateError
from sales.models import Sale, SaleStatus
from sales.selectors import sale_list_annotation_add
from seckill_site.admin import list_time, money, shop_time_zone
from seckill_site.translated import languages
from users.merchants import is_merchant, visible_to_merchant

# The merchant's sale list, in goods' admin, shows each sale's paid and unpaid orders and its
# revenue; goods cannot import orders, so orders hands it the query.
sale_list_annotation_add(sales_with_order_figures)

# Excel reads a CSV file as UTF-8 only when it starts with the byte order mark; without it,
# Chinese names and addresses open as mojibake on a Chinese Windows.
UTF8_BOM = "\ufeff"


# The live chart's intervals (static/js/live.js picks the first giving at most 120 bars).
LIVE_BUCKETS = [1, 2, 5, 10, 15, 30, 60, 120, 300, 600, 900, 1800, 3600]


def _bucket_words(seconds: int) -> str:
    # Not ngettext: "per 1 second" is nobody's way of saying it, in English or Chinese.
    if seconds == 1:
        return _("orders per second")
    if seconds < 60:
        return _("orders per %(n)d seconds") % {"n": seconds}
    if seconds == 60:
        return _("orders per minute")
    if seconds < 3600:
        return _("orders per %(n)d minutes") % {"n": seconds // 60}
    return _("orders per hour")


def _live_words() -> dict:
    """What static/js/live.js writes, in the merchant's language."""
    return {
        "status": [capfirst(label) for _value, label in SaleStatus.choices],
        "buckets": {str(seconds): _bucket_words(seconds) for seconds in LIVE_BUCKETS},
        "soFar": _("orders so far"),
        "time": _("shop time"),
        "noOrders": _("No orders yet."),
        "notStarted": _("The sale has not started; the chart begins when it does."),
    }


class _Echo:
    """A file-like object whose write hands the line back, for csv.writer in a stream."""

    def write(self, value: str) -> str:
        return value


def orders_csv_response(queryset) -> StreamingHttpResponse:
    """The orders as a CSV download for Excel: UTF-8 with a byte order mark, identifiers as
    text (orders.selectors.orders_csv_rows), streamed row by row."""
    writer = csv.writer(_Echo())

    def lines():
        yield UTF8_BOM
        for row in orders_csv_rows(orders=queryset):
            yield writer.writerow(row)

    response = StreamingHttpResponse(lines(), content_type="text/csv; charset=utf-8")
    response["Content-Disposition"] = f'attachment; filename="orders-{timezone.localtime():%Y%m%d-%H%M%S}.csv"'
    return response


class SaleFilter(admin.RelatedOnlyFieldListFilter):
    """By sale: the merchant's sales that have orders, named in the shop's time zone. Every
    order of the shop has its sale, so there is no "(none)" choice."""

    include_empty_choice = False


class OrderEventInline(admin.TabularInline):
    """The order's trail, oldest first, read only: the moves write it (orders.services)."""

    model = OrderEvent
    template = "admin/orders/order/money_inline.html"  # a plain read-only table, as the money's
    extra = 0
    max_num = 0
    can_delete = False
    fields = ("at_display", "kind_display", "who", "note")
    readonly_fields = fields
    verbose_name = gettext_lazy("what happened")
    verbose_name_plural = gettext_lazy("history")

    def has_view_permission(self, request, obj=None):
        if request.user.is_superuser:
            return True
        return is_merchant(request) and (obj is None or obj.goods.owner_id == request.user.pk)

    def has_add_permission(self, request, obj=None):
        return False

    def has_change_permission(self, request, obj=None):
        return False

    def get_queryset(self, request):
        return super().get_queryset(request).select_related("actor")

    @admin.display(description=gettext_lazy("at"))
    def at_display(self, obj):
        return list_time(obj.at)

    @admin.display(description=gettext_lazy("what happened"))
    def kind_display(self, obj):
        return capfirst(obj.get_kind_display())

    @admin.display(description=gettext_lazy("by"))
    def who(self, obj):
        return person(obj.actor) if obj.actor else _("the shop")


@admin.register(Order)
class OrderAdmin(ContactAdmin):
    owner_path = "goods__owner"
    merchant_can_add = False
    merchant_can_delete = False
    list_display = (
        "order_no",
        "item_display",
        "price_display",
        "buyer",
        "status_display",
        "ordered_display",
        "paid_display",
        "ship_to",
    )
    list_filter = (
        "status",
        ToShipFilter,
        RefundRequestFilter,
        MessagesToAnswerFilter,
        ReturnRequestFilter,
        ("sale", SaleFilter),
        "created_at",
    )
    # `goods_name` is the name in LANGUAGE_CODE (else the other); the other languages' names are
    # `goods_names`' keys, each searched as its text (`goods_names ->> 'zh-hans'`): searching
    # the whole JSON would match its keys ("en") in every order.
    search_fields = (
        "order_no",
        "user__mobile",
        "goods_name",
        *(f"goods_names__{code}" for code in languages() if code != settings.LANGUAGE_CODE),
        "address__recipient",
        "address__phone",
    )
    fieldsets = (
        (
            None,
            {
                "fields": (
                    "order_no",
                    "item_display",
                    "price_display",
                    "quantity",
                    "buyer",
                    "sale",
                    "status_display",
                    "ordered_display",
                    "pay_deadline_display",
                    "paid_display",
                    "cancelled_display",
                    "cancel_reason_display",
                )
            },
        ),
        (gettext_lazy("Ship to"), {"fields": ("ship_to_full",)}),
        (gettext_lazy("Parcel"), {"fields": ("parcel", "shipped_at", "delivered_at")}),
    )
    readonly_fields = [name for fieldset in fieldsets for name in fieldset[1]["fields"] if isinstance(name, str)]
    actions = ["cancel_unpaid", "mark_delivered", "export_csv"]
    change_list_template = "admin/orders/order/change_list.html"
    change_form_template = "admin/orders/order/change_form.html"
    inlines = [PaymentInline, RefundInline, OrderEventInline]

    @admin.display(description=gettext_lazy("item"), ordering="goods_name")
    def item_display(self, obj):
        return obj.item_name  # in the merchant's language, else the other

    @admin.display(description=gettext_lazy("price"), ordering="price")
    def price_display(self, obj):
        return money(obj.price)

    @admin.display(description=gettext_lazy("buyer"), ordering="user__mobile")
    def buyer(self, obj):
        user = obj.user
        return format_html("{}<br><small>{}</small>", user.nickname, user.mobile) if user.nickname else user.mobile

    @admin.display(description=gettext_lazy("status"), ordering="status")
    def status_display(self, obj):
        css = {
            "paid": "on",
            "shipped": "on",
            "delivered": "ended",
            "unpaid": "soon",
            "cancelled": "ended",
            "refunded": "refunded",
        }[obj.status]
        return format_html('<span class="sale-status {}">{}</span>', css, capfirst(obj.get_status_display()))

    @admin.display(description=gettext_lazy("ordered at"), ordering="created_at")
    def ordered_display(self, obj):
        return list_time(obj.created_at)

    @admin.display(description=gettext_lazy("paid at"), ordering="paid_at")
    def paid_display(self, obj):
        return list_time(obj.paid_at)

    # The order's page shows its times as its lists do (list_time), not in Django's own format.
    @admin.display(description=gettext_lazy("pay by"))
    def pay_deadline_display(self, obj):
        return list_time(obj.pay_deadline)

    @admin.display(description=gettext_lazy("cancelled at"))
    def cancelled_display(self, obj):
        return list_time(obj.cancelled_at)

    @admin.display(description=gettext_lazy("ship to"))
    def ship_to(self, obj):
        address = order_address(obj)
        if address is None:
            return "-"
        return format_html(
            '{} <span class="phone">{}</span><br><small>{}</small>',
            address.recipient,
            address.phone,
            address.place,
        )

    @admin.display(description=gettext_lazy("address"))
    def ship_to_full(self, obj):
        address = order_address(obj)
        if address is None:
            return _("Not paid yet: the shopper chooses the address when paying.")
        postcode = f" {address.postcode}" if address.postcode else ""
        return format_html(
            "{} {}<br>{} {}{}",
            address.recipient,
            address.phone,
            address.place,
            address.street,
            postcode,
        )

    @admin.display(description=gettext_lazy("parcel"))
    def parcel(self, obj):
        shipment = order_shipment(obj)
        return str(shipment) if shipment else "-"

    @admin.display(description=gettext_lazy("shipped at"))
    def shipped_at(self, obj):
        shipment = order_shipment(obj)
        return list_time(shipment.shipped_at) if shipment else "-"

    @admin.display(description=gettext_lazy("delivered at"))
    def delivered_at(self, obj):
        shipment = order_shipment(obj)
        return list_time(shipment.delivered_at) if shipment and shipment.delivered_at else "-"

    @admin.display(description=gettext_lazy("cancel reason"))
    def cancel_reason_display(self, obj):
        return _(obj.cancel_reason) if obj.cancel_reason else "-"  # stored in English (orders.services)

    # --- exporting ----------------------------------------------------------------------------

    @admin.action(description=gettext_lazy("Export selected orders as CSV"))
    def export_csv(self, request, queryset):
        # The queryset is this merchant's orders only (get_queryset).
        return orders_csv_response(queryset)

    def export_view(self, request):
        """The list as filtered and searched on the page (every page of it, not only the
        ticked rows), as CSV: the changelist builds the queryset, scoped like the page."""
        if not self.has_view_permission(request):
            raise PermissionDenied
        changelist = self.get_changelist_instance(request)
        return orders_csv_response(changelist.get_queryset(request))

    def changelist_view(self, request, extra_context=None):
        query = request.GET.urlencode()
        export_url = reverse("admin:orders_order_export") + (f"?{query}" if query else "")
        orders = self.get_queryset(request)
        context = {
            "export_url": export_url,
            "ship_file_url": reverse("admin:orders_order_ship_file"),
            "to_ship": orders_to_ship(orders).count(),
            "refund_requests": orders.filter(refund_requests__status="open").count(),
            "messages_to_answer": self.messages_to_answer(orders),
            "returns_to_answer": orders.filter(return_requests__status="open").count(),
            "parcels_coming_back": orders.filter(return_requests__status="sent").count(),
        }
        return super().changelist_view(request, {**(extra_context or {}), **context})

    @admin.action(description=gettext_lazy("Cancel selected unpaid orders (returns their stock)"))
    def cancel_unpaid(self, request, queryset):
        # The queryset is already scoped to this merchant's orders (get_queryset). Each order's
        # open payment attempts are closed at their provider before its unit goes back.
        cancelled = unreachable = 0
        for order in queryset.filter(status=OrderStatus.UNPAID).order_by("pk"):
            if order_cancel_by_merchant(order=order, actor_id=request.user.pk):
                cancelled += 1
            elif Order.objects.filter(pk=order.pk, status=OrderStatus.UNPAID).exists():
                unreachable += 1  # a payment could not be stopped yet: the order keeps its unit
        skipped = queryset.count() - cancelled - unreachable
        message = ngettext("Cancelled %(n)d order.", "Cancelled %(n)d orders.", cancelled) % {"n": cancelled}
        self.message_user(request, message, messages.SUCCESS)
        if unreachable:
            message = ngettext(
                "%(n)d order was not cancelled: its payment could not be stopped at the payment service "
                "(unreachable, or a payment under way). It stays unpaid; try again in a minute.",
                "%(n)d orders were not cancelled: their payments could not be stopped at the payment service "
                "(unreachable, or a payment under way). They stay unpaid; try again in a minute.",
                unreachable,
            ) % {"n": unreachable}
            self.message_user(request, message, messages.WARNING)
        if skipped:
            message = ngettext(
                "%(n)d order was not unpaid and was left alone.",
                "%(n)d orders were not unpaid and were left alone.",
                skipped,
            ) % {"n": skipped}
            self.message_user(request, message, messages.WARNING)

    def get_queryset(self, request):
        return super().get_queryset(request).select_related("user", "goods", "address", "shipment", "sale__goods")

    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False  # orders change through services (pay, cancel), never by hand

    # --- the order's page: its payments and refunds, and the refund button ------------------

    def get_inlines(self, request, obj):
        """Payments, refunds and the order's history, each table shown only when the order has a
        row for it."""
        if obj is None:
            return []
        inlines = []
        if obj.payments.exists():
            inlines.append(PaymentInline)
        if Refund.objects.filter(payment__order=obj).exists():
            inlines.append(RefundInline)
        if obj.events.exists():
            inlines.append(OrderEventInline)
        return inlines

    def render_change_form(self, request, context, add=False, change=False, form_url="", obj=None):
        if obj is not None:
            context.update(self.fulfilment_links(request, obj))
            context.update(self.contact_context(request, obj))
        if (
            obj is not None
            and obj.status in PAID_STATUSES
            and self.may_act_on(request, obj)
            and obj.payments.filter(status=PaymentStatus.SUCCEEDED).exists()
        ):
            context["refund_url"] = reverse("admin:orders_order_refund", args=[obj.pk])
        return super().render_change_form(request, context, add=add, change=change, form_url=form_url, obj=obj)

    def refund_view(self, request, object_id: int):
        """Refund a paid order in full: GET asks for a reason, POST refunds (order_refund)."""
        order = self.get_queryset(request).filter(pk=object_id).first()
        if order is None:
            raise Http404  # another merchant's order, like a missing one
        if not self.may_act_on(request, order):
            raise PermissionDenied
        change_url = reverse("admin:orders_order_change", args=[order.pk])
        if order.status not in PAID_STATUSES:
            message = _("Only a paid order can be refunded; this one is %(status)s.") % {
                "status": order.get_status_display()
            }
            self.message_user(request, message, messages.ERROR)
            return HttpResponseRedirect(change_url)
        payment = order.payments.filter(status=PaymentStatus.SUCCEEDED).first()
        if payment is None:
            # Paid before the shop recorded payments: there is nothing to send a refund for.
            self.message_user(request, _("This order has no payment on record to refund."), messages.ERROR)
            return HttpResponseRedirect(change_url)
        if request.method == "POST":
            form = RefundForm(request.POST)
            if form.is_valid():
                try:
                    refund = order_refund(order=order, reason=form.cleaned_data["reason"], actor_id=request.user.pk)
                except OrderStateError as refusal:
                    self.message_user(request, str(refusal), messages.ERROR)
                else:
                    amount = amount_with_currency(refund.amount, refund.payment.currency)
                    self.log_change(
                        request,
                        order,
                        _("Refunded %(amount)s (refund %(number)s): %(reason)s")
                        % {"amount": amount, "number": refund.request_no, "reason": refund.reason},
                    )
                    message = _(
                        "Order %(order)s is refunded: %(amount)s goes back to the shopper once the payment "
                        "service confirms it."
                    ) % {"order": order.order_no, "amount": amount}
                    self.message_user(request, message, messages.SUCCESS)
                return HttpResponseRedirect(change_url)
        else:
            form = RefundForm()
        context = {
            **self.admin_site.each_context(request),
            "title": _("Refund order %(order)s") % {"order": order.order_no},
            "subtitle": None,
            "opts": self.opts,
            "original": order,
            "order": order,
            "payment": payment,
            "provider": provider_label(payment.provider),
            "amount": amount_with_currency(payment.amount, payment.currency),
            "form": form,
            "change_url": change_url,
        }
        return TemplateResponse(request, "admin/orders/order/refund.html", context)

    # --- the merchant's live view of a sale: what is left, its orders, its revenue ------------

    def get_urls(self):
        own = [
            path("export.csv", self.admin_site.admin_view(self.export_view), name="orders_order_export"),
            path("<int:object_id>/refund/", self.admin_site.admin_view(self.refund_view), name="orders_order_refund"),
            *self.fulfilment_urls(),
            *self.contact_urls(),
            path("sale/<int:sale_id>/live/", self.admin_site.admin_view(self.live_view), name="orders_sale_live"),
            path(
                "sale/<int:sale_id>/live.json",
                self.admin_site.admin_view(self.live_data),
                name="orders_sale_live_data",
            ),
        ]
        return own + super().get_urls()

    def _sale_or_404(self, request, sale_id: int) -> Sale:
        """Another merchant's sale is a 404, like a missing one."""
        if not (request.user.is_superuser or is_merchant(request)):
            raise Http404
        sales = visible_to_merchant(Sale.objects.select_related("goods"), user=request.user, owner_path="goods__owner")
        sale = sales.filter(pk=sale_id).first()
        if sale is None:
            raise Http404
        return sale

    def live_view(self, request, sale_id: int):
        sale = self._sale_or_404(request, sale_id)
        context = {
            **self.admin_site.each_context(request),
            "title": _("Live: %(sale)s") % {"sale": sale.goods.name},
            "sale": sale,
            "opts": Sale._meta,
            "data_url": reverse("admin:orders_sale_live_data", args=[sale.pk]),
            "orders_url": reverse("admin:orders_order_changelist") + f"?sale__id__exact={sale.pk}",
            "zone": shop_time_zone(),
            "live_words": _live_words(),
            "cards": sale_live_cards(sale),
        }
        return TemplateResponse(request, "admin/sales/sale/live.html", context)

    def live_data(self, request, sale_id: int):
        return JsonResponse(sale_figures(sale=self._sale_or_404(request, sale_id)))


# --- payments and reconciliation's findings, for finding a payment by its number -------------
