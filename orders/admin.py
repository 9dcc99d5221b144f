import csv

from django.contrib import admin, messages
from django.http import Http404, JsonResponse, StreamingHttpResponse
from django.template.response import TemplateResponse
from django.urls import path, reverse
from django.utils import timezone
from django.utils.translation import gettext_lazy as _
from django.utils.translation import ngettext

from goods.admin import MerchantScopedAdmin, is_merchant
from goods.models import SeckillGoods
from goods.selectors import visible_to_merchant
from orders.models import Order, OrderStatus
from orders.selectors import orders_csv_rows, sale_figures
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

    # --- the merchant's live view of a sale: stock in both stores and its orders ---------------

    def get_urls(self):
        own = [
            path("sale/<int:sale_id>/live/", self.admin_site.admin_view(self.live_view), name="orders_sale_live"),
            path(
                "sale/<int:sale_id>/live.json",
                self.admin_site.admin_view(self.live_data),
                name="orders_sale_live_data",
            ),
        ]
        return own + super().get_urls()

    def _sale_or_404(self, request, sale_id: int) -> SeckillGoods:
        """Another merchant's sale is a 404, like a missing one."""
        if not (request.user.is_superuser or is_merchant(request)):
            raise Http404
        sales = visible_to_merchant(
            SeckillGoods.objects.select_related("goods"), user=request.user, owner_path="goods__owner"
        )
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
            "opts": SeckillGoods._meta,
            "data_url": reverse("admin:orders_sale_live_data", args=[sale.pk]),
        }
        return TemplateResponse(request, "admin/goods/seckillgoods/live.html", context)

    def live_data(self, request, sale_id: int):
        return JsonResponse(sale_figures(sale=self._sale_or_404(request, sale_id)))
