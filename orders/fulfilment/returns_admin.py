"""The merchant's return desk in the order admin: answer a shopper's return request (approve
with the address the parcel goes back to, or decline with a word), and mark the parcel
received, which refunds the order. The moves are orders.fulfilment.returns'; FulfilmentAdmin
mixes this in and supplies the order lookup and the page frame."""

from django import forms
from django.contrib import admin, messages
from django.http import HttpResponseRedirect
from django.urls import path, reverse
from django.utils.text import capfirst
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy

from orders.fulfilment.models import RETURN_ACTIVE, ReturnRequest, ReturnRequestStatus
from orders.fulfilment.returns import return_parcel_received, return_request_approve, return_request_decline
from orders.services import OrderStateError


class ReturnApproveForm(forms.Form):
    return_address = forms.CharField(
        label=capfirst(gettext_lazy("return address")),
        max_length=200,
        widget=forms.Textarea(attrs={"rows": 3, "cols": 60}),
        help_text=gettext_lazy("Recipient, phone and address: the shopper sends the parcel there."),
    )


class ReturnDeclineForm(forms.Form):
    answer = forms.CharField(
        label=capfirst(gettext_lazy("why you decline")),
        max_length=200,
        widget=forms.Textarea(attrs={"rows": 3, "cols": 60}),
        help_text=gettext_lazy("The shopper reads this on their order."),
    )


def last_return_address(merchant_id: int) -> str:
    """The address this merchant last took a parcel back at: most merchants have one."""
    last = (
        ReturnRequest.objects.filter(decided_by_id=merchant_id)
        .exclude(return_address="")
        .order_by("-decided_at")
        .values_list("return_address", flat=True)
        .first()
    )
    return last or ""


class ReturnDesk:
    """The order admin's return moves; FulfilmentAdmin supplies _order_to_act_on and _page."""

    def return_urls(self):
        return [
            path(
                "<int:object_id>/return-request/",
                self.admin_site.admin_view(self.return_request_view),
                name="orders_order_return_request",
            )
        ]

    def return_links(self, order) -> dict:
        """The order page's button for a return under way that waits for the merchant."""
        status = order.return_requests.filter(status__in=RETURN_ACTIVE).values_list("status", flat=True).first()
        if status not in (ReturnRequestStatus.OPEN, ReturnRequestStatus.SENT):
            return {}
        url = reverse("admin:orders_order_return_request", args=[order.pk])
        return {"return_request_url": url, "returning": status}

    def return_request_view(self, request, object_id: int):
        """An open request: approve (with the return address) or decline. A parcel sent back:
        mark it received, which refunds the order."""
        order = self._order_to_act_on(request, object_id)  # type: ignore[attr-defined]
        change_url = reverse("admin:orders_order_change", args=[order.pk])
        return_request = order.return_requests.filter(status__in=RETURN_ACTIVE).first()
        if return_request is None or return_request.status == ReturnRequestStatus.APPROVED:
            self.message_user(request, _("This return waits for nothing from you now."), messages.WARNING)  # type: ignore[attr-defined]
            return HttpResponseRedirect(change_url)
        decision = request.POST.get("decision") if request.method == "POST" else None
        approve_form = ReturnApproveForm(
            request.POST if decision == "approve" else None,
            initial={"return_address": last_return_address(request.user.pk)},
        )
        decline_form = ReturnDeclineForm(request.POST if decision == "decline" else None)
        message = None
        try:
            if decision == "received":
                return_parcel_received(order_id=order.pk, request_id=return_request.pk, actor_id=request.user.pk)
                message = _("The parcel is back: order %(order)s is refunded.") % {"order": order.order_no}
            elif decision == "approve" and approve_form.is_valid():
                return_request_approve(
                    order_id=order.pk,
                    request_id=return_request.pk,
                    return_address=approve_form.cleaned_data["return_address"],
                    actor_id=request.user.pk,
                )
                message = _("Return approved: the shopper sends order %(order)s back to you.") % {
                    "order": order.order_no
                }
            elif decision == "decline" and decline_form.is_valid():
                return_request_decline(
                    order_id=order.pk,
                    request_id=return_request.pk,
                    answer=decline_form.cleaned_data["answer"],
                    actor_id=request.user.pk,
                )
                message = _("You declined the return of order %(order)s.") % {"order": order.order_no}
        except OrderStateError as refusal:
            self.message_user(request, str(refusal), messages.ERROR)  # type: ignore[attr-defined]
            return HttpResponseRedirect(change_url)
        if message:
            self.message_user(request, message, messages.SUCCESS)  # type: ignore[attr-defined]
            return HttpResponseRedirect(change_url)
        title = _("Return request for order %(order)s") % {"order": order.order_no}
        context = {
            "approve_form": approve_form,
            "decline_form": decline_form,
            "return_request": return_request,
            "payment": order.payments.first(),
        }
        status = 400 if decision in ("approve", "decline") else 200
        page = self._page(request, "admin/orders/order/return_request.html", order, title, **context)  # type: ignore[attr-defined]
        page.status_code = status
        return page


class ReturnRequestFilter(admin.SimpleListFilter):
    """Orders whose return waits for the merchant: to answer, or the parcel coming back."""

    title = gettext_lazy("return")
    parameter_name = "return_request"

    def lookups(self, request, model_admin):
        return [
            (ReturnRequestStatus.OPEN, _("return to answer")),
            (ReturnRequestStatus.APPROVED, _("approved, the shopper to send it")),
            (ReturnRequestStatus.SENT, _("parcel coming back")),
        ]

    def queryset(self, request, queryset):
        if self.value() in (ReturnRequestStatus.OPEN, ReturnRequestStatus.APPROVED, ReturnRequestStatus.SENT):
            return queryset.filter(return_requests__status=self.value())
        return queryset
