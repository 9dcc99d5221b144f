"""The merchant's shipping desk in the order admin: ship an order (carrier, tracking number),
ship many from a CSV file, mark parcels delivered, and answer a shopper's refund
request (returns after shipping: orders.fulfilment.returns_admin). The moves are
orders.fulfilment.services'; these are their forms and pages."""

from django import forms
from django.contrib import admin, messages
from django.http import Http404, HttpResponseRedirect
from django.template.response import TemplateResponse
from django.urls import path, reverse
from django.utils.text import capfirst
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy, ngettext

from orders.fulfilment.models import Carrier, RefundRequestStatus
from orders.fulfilment.returns_admin import ReturnDesk
from orders.fulfilment.selectors import orders_to_ship
from orders.fulfilment.services import (
    TRACKING_NO_MAX,
    order_deliver,
    order_ship,
    refund_request_approve,
    refund_request_decline,
)
from orders.fulfilment.shipping_csv import ShipFileError, orders_ship_from_csv
from orders.models import OrderStatus
from orders.services import OrderStateError
from users.merchants import MerchantScopedAdmin


class ShipForm(forms.Form):
    carrier = forms.ChoiceField(label=capfirst(gettext_lazy("carrier")), choices=[("", "---------"), *Carrier.choices])
    tracking_no = forms.CharField(label=capfirst(gettext_lazy("tracking number")), max_length=TRACKING_NO_MAX + 20)


class ShipFileForm(forms.Form):
    file = forms.FileField(
        label=capfirst(gettext_lazy("CSV file")),
        help_text=gettext_lazy(
            "Columns “order number”, “carrier” and “tracking number”, with their names on the first line; "
            "other columns are ignored, so the orders export filled in will do."
        ),
    )


class DeclineForm(forms.Form):
    answer = forms.CharField(
        label=capfirst(gettext_lazy("why you decline")),
        max_length=200,
        widget=forms.Textarea(attrs={"rows": 3, "cols": 60}),
        help_text=gettext_lazy("The shopper reads this on their order."),
    )


class FulfilmentAdmin(ReturnDesk, MerchantScopedAdmin):
    """The order admin's moves after the payment; OrderAdmin builds on it."""

    def may_act_on(self, request, obj) -> bool:
        """May the user move `obj` through a service (ship or refund it)? The merchant scope's
        change permission: a superuser, or the merchant whose order it is. (OrderAdmin's
        has_change_permission is False for everyone: it only keeps the order's form read only.)"""
        return MerchantScopedAdmin.has_change_permission(self, request, obj)

    @admin.action(description=gettext_lazy("Mark selected shipped orders delivered"))
    def mark_delivered(self, request, queryset):
        delivered = skipped = 0
        for order_id in queryset.order_by("pk").values_list("pk", flat=True):
            try:
                order_deliver(order_id=order_id, actor_id=request.user.pk)
            except OrderStateError:
                skipped += 1
            else:
                delivered += 1
        message = ngettext("%(n)d order marked delivered.", "%(n)d orders marked delivered.", delivered)
        self.message_user(request, message % {"n": delivered}, messages.SUCCESS)
        if skipped:
            message = ngettext(
                "%(n)d order was not shipped and was left alone.",
                "%(n)d orders were not shipped and were left alone.",
                skipped,
            )
            self.message_user(request, message % {"n": skipped}, messages.WARNING)

    def fulfilment_urls(self):
        site = self.admin_site
        return [
            path("ship.csv/", site.admin_view(self.ship_file_view), name="orders_order_ship_file"),
            path("<int:object_id>/ship/", site.admin_view(self.ship_view), name="orders_order_ship"),
            path(
                "<int:object_id>/refund-request/",
                site.admin_view(self.refund_request_view),
                name="orders_order_refund_request",
            ),
            *self.return_urls(),
        ]

    def fulfilment_links(self, request, order) -> dict:
        """The order page's buttons that apply to `order` now."""
        if not self.may_act_on(request, order):
            return {}
        links = self.return_links(order)
        open_request = order.refund_requests.filter(status=RefundRequestStatus.OPEN).exists()
        if open_request:
            links["refund_request_url"] = reverse("admin:orders_order_refund_request", args=[order.pk])
        elif order.status == OrderStatus.PAID:
            links["ship_url"] = reverse("admin:orders_order_ship", args=[order.pk])
        return links

    def _order_to_act_on(self, request, object_id: int):
        order = self.get_queryset(request).filter(pk=object_id).first()
        if order is None or not self.may_act_on(request, order):
            raise Http404  # another merchant's order, like a missing one
        return order

    def _page(self, request, template: str, order, title: str, **context):
        return TemplateResponse(
            request,
            template,
            {
                **self.admin_site.each_context(request),
                "title": title,
                "subtitle": None,
                "opts": self.opts,
                "original": order,
                "order": order,
                "change_url": reverse("admin:orders_order_change", args=[order.pk]) if order else None,
                **context,
            },
        )

    def ship_view(self, request, object_id: int):
        """GET: the parcel's carrier and tracking number; POST ships (order_ship)."""
        order = self._order_to_act_on(request, object_id)
        change_url = reverse("admin:orders_order_change", args=[order.pk])
        form = ShipForm(request.POST or None)
        if request.method == "POST" and form.is_valid():
            try:
                shipment = order_ship(
                    order_id=order.pk,
                    carrier=form.cleaned_data["carrier"],
                    tracking_no=form.cleaned_data["tracking_no"],
                    actor_id=request.user.pk,
                )
            except OrderStateError as refusal:
                form.add_error(None, str(refusal))
            else:
                message = _("Order %(order)s is shipped: %(parcel)s.") % {"order": order.order_no, "parcel": shipment}
                self.message_user(request, message, messages.SUCCESS)
                return HttpResponseRedirect(change_url)
        title = _("Ship order %(order)s") % {"order": order.order_no}
        return self._page(request, "admin/orders/order/ship.html", order, title, form=form)

    def ship_file_view(self, request):
        """Ship the merchant's orders a CSV file lists (orders.fulfilment.shipping_csv)."""
        if not self.has_view_permission(request):
            raise Http404
        form = ShipFileForm(request.POST or None, request.FILES or None)
        report = problems = None
        if request.method == "POST" and form.is_valid():
            try:
                report = orders_ship_from_csv(
                    data=form.cleaned_data["file"].read(),
                    orders=self.get_queryset(request),
                    actor_id=request.user.pk,
                )
            except ShipFileError as error:
                form.add_error("file", str(error))
                problems = error.problems
            else:
                problems = report.problems
        context = {"form": form, "report": report, "problems": problems}
        return self._page(
            request, "admin/orders/order/ship_file.html", None, _("Ship orders from a CSV file"), **context
        )

    def refund_request_view(self, request, object_id: int):
        """The shopper's open request: approve (a full refund through the provider) or decline."""
        order = self._order_to_act_on(request, object_id)
        change_url = reverse("admin:orders_order_change", args=[order.pk])
        refund_request = order.refund_requests.filter(status=RefundRequestStatus.OPEN).first()
        if refund_request is None:
            self.message_user(request, _("This refund request was answered already."), messages.WARNING)
            return HttpResponseRedirect(change_url)
        form = DeclineForm(request.POST if request.POST.get("decision") == "decline" else None)
        if request.method == "POST":
            try:
                if request.POST.get("decision") == "approve":
                    refund_request_approve(order_id=order.pk, request_id=refund_request.pk, actor_id=request.user.pk)
                    message = _("Order %(order)s is refunded as the shopper asked.") % {"order": order.order_no}
                elif form.is_valid():
                    refund_request_decline(
                        order_id=order.pk,
                        request_id=refund_request.pk,
                        answer=form.cleaned_data["answer"],
                        actor_id=request.user.pk,
                    )
                    message = _("You declined the refund; order %(order)s can ship.") % {"order": order.order_no}
                else:
                    message = None
            except OrderStateError as refusal:
                self.message_user(request, str(refusal), messages.ERROR)
                return HttpResponseRedirect(change_url)
            if message:
                self.message_user(request, message, messages.SUCCESS)
                return HttpResponseRedirect(change_url)
        title = _("Refund request for order %(order)s") % {"order": order.order_no}
        context = {"form": form, "refund_request": refund_request, "payment": order.payments.first()}
        return self._page(request, "admin/orders/order/refund_request.html", order, title, **context)


class RefundRequestFilter(admin.SimpleListFilter):
    title = gettext_lazy("refund request")
    parameter_name = "refund_request"

    def lookups(self, request, model_admin):
        return [("open", _("waiting for your answer"))]

    def queryset(self, request, queryset):
        if self.value() == "open":
            return queryset.filter(refund_requests__status=RefundRequestStatus.OPEN)
        return queryset


class ToShipFilter(admin.SimpleListFilter):
    """The orders to ship now: paid, and not held by a refund request waiting for an answer."""

    title = gettext_lazy("to ship")
    parameter_name = "to_ship"

    def lookups(self, request, model_admin):
        return [("yes", _("to ship now (no refund request waiting)"))]

    def queryset(self, request, queryset):
        if self.value() == "yes":
            return orders_to_ship(queryset)
        return queryset
