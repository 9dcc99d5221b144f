"""The merchant's side of the orders' threads in the order admin: the orders with a shopper's
message to answer (a filter, and a link on the list) and, on an order's page, its thread and
the answer form. The rules are orders.contact.services'."""

from django.contrib import admin, messages
from django.http import HttpResponseRedirect
from django.urls import path, reverse
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy

from orders.contact.services import MessageRefused, order_message_answer
from orders.forms import MessageForm
from orders.fulfilment.admin import FulfilmentAdmin
from orders.models import THREAD_STATUSES
from orders.selectors import order_messages, orders_with_messages_to_answer


class MessagesToAnswerFilter(admin.SimpleListFilter):
    title = gettext_lazy("messages")
    parameter_name = "messages"

    def lookups(self, request, model_admin):
        return [("to-answer", _("a shopper's message to answer"))]

    def queryset(self, request, queryset):
        if self.value() == "to-answer":
            return orders_with_messages_to_answer(queryset)
        return queryset


class ContactAdmin(FulfilmentAdmin):
    """The order admin's threads; OrderAdmin builds on it."""

    def contact_urls(self):
        return [
            path(
                "<int:object_id>/message/",
                self.admin_site.admin_view(self.message_view),
                name="orders_order_message",
            ),
        ]

    def contact_context(self, request, order) -> dict:
        """The order page's thread, and the form to answer when the user may act on the order."""
        context: dict = {"order_messages": order_messages(order)}
        if order.status in THREAD_STATUSES and self.may_act_on(request, order):
            context["message_form"] = MessageForm(auto_id="id_answer_%s")
            context["message_url"] = reverse("admin:orders_order_message", args=[order.pk])
        return context

    def messages_to_answer(self, orders) -> int:
        return orders_with_messages_to_answer(orders).count()

    def message_view(self, request, object_id: int):
        """GET: the thread and the answer form on a page of their own; POST answers
        (order_message_answer) and goes back to the order's page, or shows the form's errors."""
        order = self._order_to_act_on(request, object_id)
        change_url = reverse("admin:orders_order_change", args=[order.pk])
        form = MessageForm(request.POST or None, auto_id="id_answer_%s")
        status = 200
        if request.method == "POST":
            if form.is_valid():
                try:
                    order_message_answer(order_id=order.pk, text=form.cleaned_data["text"], actor_id=request.user.pk)
                except MessageRefused as refused:
                    self.message_user(request, str(refused), messages.ERROR)
                    return HttpResponseRedirect(change_url)
                sent = _("Your answer is sent; the shopper gets a text about it.")
                self.message_user(request, sent, messages.SUCCESS)
                return HttpResponseRedirect(f"{change_url}#messages")
            status = 400
        title = _("Messages about order %(order)s") % {"order": order.order_no}
        response = self._page(
            request,
            "admin/orders/order/message.html",
            order,
            title,
            order_messages=order_messages(order),
            message_form=form,
            message_url=request.path,
        )
        response.status_code = status
        return response
