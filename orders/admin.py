from django.contrib import admin, messages

from goods.admin import MerchantScopedAdmin
from orders.models import Order, OrderStatus
from orders.services import REASON_MERCHANT, order_cancel


@admin.register(Order)
class OrderAdmin(MerchantScopedAdmin):
    owner_path = "goods__owner"
    merchant_can_add = False
    merchant_can_delete = False
    list_display = ("order_no", "goods_name", "price", "user", "status", "created_at", "paid_at", "cancelled_at")
    list_filter = ("status", "created_at")
    search_fields = ("order_no", "user__mobile", "goods_name")
    readonly_fields = [f.name for f in Order._meta.fields]
    actions = ["cancel_unpaid"]

    @admin.action(description="Cancel selected unpaid orders (returns their stock)")
    def cancel_unpaid(self, request, queryset):
        # The queryset is already scoped to this merchant's orders (get_queryset).
        ids = list(queryset.filter(status=OrderStatus.UNPAID).order_by("pk").values_list("pk", flat=True))
        cancelled = sum(order_cancel(order_id=order_id, reason=REASON_MERCHANT) for order_id in ids)
        skipped = queryset.count() - cancelled
        self.message_user(request, f"Cancelled {cancelled} order(s).", messages.SUCCESS)
        if skipped:
            self.message_user(request, f"{skipped} order(s) were not unpaid and were left alone.", messages.WARNING)

    def get_queryset(self, request):
        return super().get_queryset(request).select_related("user", "goods")

    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False  # orders change through services (pay, cancel), never by hand
