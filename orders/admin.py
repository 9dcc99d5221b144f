from django.contrib import admin

from goods.admin import MerchantScopedAdmin
from orders.models import Order


@admin.register(Order)
class OrderAdmin(MerchantScopedAdmin):
    owner_path = "goods__owner"
    merchant_can_add = False
    merchant_can_delete = False
    list_display = ("order_no", "goods_name", "price", "user", "status", "created_at", "paid_at", "cancelled_at")
    list_filter = ("status", "created_at")
    search_fields = ("order_no", "user__mobile", "goods_name")
    readonly_fields = [f.name for f in Order._meta.fields]

    def get_queryset(self, request):
        return super().get_queryset(request).select_related("user", "goods")

    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False  # orders change through services (pay, cancel), never by hand
