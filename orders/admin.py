import csv

from django.contrib import admin, messages
from django.http import StreamingHttpResponse
from django.utils import timezone
from django.utils.translation import gettext_lazy as _
from django.utils.translation import ngettext

from goods.admin import MerchantScopedAdmin
from orders.models import Order, OrderStatus
from orders.selectors import orders_csv_rows
from orders.services import REASON_MERCHANT, order_cancel


class _Echo:
    """A file-like object whose write hands the line back, for csv.writer in a stream."""

    def write(self, value: str) -> str:
        return value


@admin.register(Order)
class OrderAdmin(MerchantScopedAdmin):
    owner_path = "goods__owner"
    merchant_can_add = False
    merchant_can_delete = False
    list_display = ("order_no", "goods_name", "price", "user", "status", "created_at", "paid_at", "cancelled_at")
    list_filter = ("status", "created_at")
    search_fields = ("order_no", "user__mobile", "goods_name")
    readonly_fields = [f.name for f in Order._meta.fields]
    actions = ["cancel_unpaid", "export_csv"]

    @admin.action(description=_("Export selected orders as CSV"))
    def export_csv(self, request, queryset):
        # The queryset is this merchant's orders only (get_queryset); streamed row by row.
        writer = csv.writer(_Echo())
        response = StreamingHttpResponse(
            (writer.writerow(row) for row in orders_csv_rows(orders=queryset)), content_type="text/csv; charset=utf-8"
        )
        response["Content-Disposition"] = f'attachment; filename="orders-{timezone.now():%Y%m%d-%H%M%S}.csv"'
        return response

    @admin.action(description=_("Cancel selected unpaid orders (returns their stock)"))
    def cancel_unpaid(self, request, queryset):
        # The queryset is already scoped to this merchant's orders (get_queryset).
        ids = list(queryset.filter(status=OrderStatus.UNPAID).order_by("pk").values_list("pk", flat=True))
        cancelled = sum(
            order_cancel(order_id=order_id, reason=REASON_MERCHANT, actor_id=request.user.pk) for order_id in ids
        )
        skipped = queryset.count() - cancelled
        message = ngettext("Cancelled %(n)d order.", "Cancelled %(n)d orders.", cancelled) % {"n": cancelled}
        self.message_user(request, message, messages.SUCCESS)
        if skipped:
            message = ngettext(
                "%(n)d order was not unpaid and was left alone.",
                "%(n)d orders were not unpaid and were left alone.",
                skipped,
            ) % {"n": skipped}
            self.message_user(request, message, messages.WARNING)

    def get_queryset(self, request):
        return super().get_queryset(request).select_related("user", "goods")

    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False  # orders change through services (pay, cancel), never by hand
