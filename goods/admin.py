"""Merchant admin: a merchant sees and edits only their own goods, sales and orders."""

from django.contrib import admin, messages
from django.core.exceptions import ValidationError
from django.db.models import Count, OuterRef, Q, Subquery, Sum
from django.db.models.functions import Coalesce
from django.http import HttpRequest, HttpResponseRedirect
from django.urls import reverse
from django.utils.html import format_html
from django.utils.translation import gettext_lazy as _

from goods import services
from goods.models import Goods, SeckillGoods, StockAudit
from goods.selectors import sale_writes_in_flight, stock_left, visible_to_merchant
from users.models import MERCHANTS_GROUP


def is_merchant(request: HttpRequest) -> bool:
    """Staff in the Merchants group; memoised on the request (the admin asks many times per page)."""
    if not hasattr(request, "_is_merchant"):
        user = request.user
        request._is_merchant = bool(
            user.is_active and user.is_staff and user.groups.filter(name=MERCHANTS_GROUP).exists()
        )
    return request._is_merchant


class MerchantScopedAdmin(admin.ModelAdmin):
    """Superusers see everything; merchants only rows whose `owner_path` is themselves.

    Permissions come from ownership rather than Django's per-model permission rows, so a new
    merchant needs nothing but the group, and direct URLs to another merchant's objects 404.
    """

    owner_path = "owner"
    merchant_can_add = True
    merchant_can_delete = True

    def get_queryset(self, request):
        queryset = super().get_queryset(request)
        if not (request.user.is_superuser or is_merchant(request)):
            return queryset.none()
        return visible_to_merchant(queryset, user=request.user, owner_path=self.owner_path)

    def _owns(self, request, obj) -> bool:
        if obj is None:
            return True
        owner_id = obj
        for part in self.owner_path.split("__"):
            owner_id = getattr(owner_id, part)
        return owner_id == request.user

    def has_module_permission(self, request):
        return request.user.is_superuser or is_merchant(request)

    def has_view_permission(self, request, obj=None):
        return request.user.is_superuser or (is_merchant(request) and self._owns(request, obj))

    def has_change_permission(self, request, obj=None):
        return self.has_view_permission(request, obj)

    def has_add_permission(self, request):
        return request.user.is_superuser or (self.merchant_can_add and is_merchant(request))

    def has_delete_permission(self, request, obj=None):
        return request.user.is_superuser or (
            self.merchant_can_delete and is_merchant(request) and self._owns(request, obj)
        )


class SaleInline(admin.TabularInline):
    model = SeckillGoods
    extra = 0
    can_delete = False  # deleted on their own page, through services.sale_delete (Redis and caches too)
    fields = ("seckill_price", "stock_count", "start_at", "end_at")
    show_change_link = True

    def has_add_permission(self, request, obj=None):
        return False  # sales are created on their own page, where saving loads them into Redis

    def has_change_permission(self, request, obj=None):
        return False


@admin.register(Goods)
class GoodsAdmin(MerchantScopedAdmin):
    list_display = ("name", "title", "price", "stock", "owner", "created_at")
    search_fields = ("name", "title")
    inlines = [SaleInline]

    def get_fields(self, request, obj=None):
        fields = ["name", "title", "image", "detail", "price", "stock"]
        return fields + ["owner"] if request.user.is_superuser else fields

    def save_model(self, request, obj, form, change):
        if not change and not request.user.is_superuser:
            obj.owner = request.user
        services.goods_save(goods=obj)

    # Deleting (one, or the bulk action) goes through the service like every other write.
    def delete_model(self, request, obj):
        _delete_through(self, request, services.goods_delete, goods=obj)

    def delete_queryset(self, request, queryset):
        for goods in queryset.order_by("pk"):
            _delete_through(self, request, services.goods_delete, goods=goods)

    def response_delete(self, request, obj_display, obj_id):
        return _response_delete(self, request, obj_display, obj_id)


def _delete_through(model_admin, request, service, **obj) -> None:
    """Call a delete service; a refusal (a sale with orders, or orders still being written)
    becomes an error message instead of a 500, and the success message is skipped."""
    try:
        service(**obj)
    except services.SaleInUse as refusal:
        request._delete_refused = True
        model_admin.message_user(request, f"{next(iter(obj.values()))}: {refusal}", messages.ERROR)


def _response_delete(model_admin, request, obj_display, obj_id):
    if getattr(request, "_delete_refused", False):
        opts = model_admin.opts
        return HttpResponseRedirect(reverse(f"admin:{opts.app_label}_{opts.model_name}_changelist"))
    return admin.ModelAdmin.response_delete(model_admin, request, obj_display, obj_id)


@admin.register(SeckillGoods)
class SeckillGoodsAdmin(MerchantScopedAdmin):
    owner_path = "goods__owner"
    list_display = (
        "goods",
        "seckill_price",
        "stock_count",
        "redis_stock",
        "orders_unpaid",
        "orders_paid",
        "orders_cancelled",
        "start_at",
        "end_at",
        "audit_link",
        "live_link",
    )
    list_filter = ("start_at",)
    fields = ("goods", "seckill_price", "stock_count", "start_at", "end_at")
    # Stock is edited as "units left to sell": lowering it below what Redis handed out makes
    # later orders fail cleanly in the database (conditional UPDATE), never oversell.

    def get_queryset(self, request):
        # A subquery, not a join: joined with the orders the audit rows would be counted once per order.
        audited = (
            StockAudit.objects.filter(sale=OuterRef("pk")).values("sale").annotate(total=Sum("delta")).values("total")
        )
        return (
            super()
            .get_queryset(request)
            .select_related("goods")
            .annotate(
                _unpaid=Count("orders", filter=Q(orders__status="unpaid")),
                _paid=Count("orders", filter=Q(orders__status="paid")),
                _cancelled=Count("orders", filter=Q(orders__status="cancelled")),
                _audited=Coalesce(Subquery(audited), 0),
            )
        )

    @admin.display(description=_("stock left (Redis)"))
    def redis_stock(self, obj):
        value = stock_left([obj.pk])[obj.pk]
        return _("not loaded") if value is None else value

    @admin.display(description=_("unpaid"))
    def orders_unpaid(self, obj):
        return obj._unpaid

    @admin.display(description=_("cancelled"))
    def orders_cancelled(self, obj):
        return obj._cancelled

    @admin.display(description=_("paid"))
    def orders_paid(self, obj):
        return obj._paid

    @admin.display(description=_("stock audit"))
    def audit_link(self, obj):
        """The sum of the sale's stock changes (equal to its stock), linking to them."""
        url = reverse("admin:goods_stockaudit_changelist") + f"?sale__id__exact={obj.pk}"
        return format_html('<a href="{}">{}</a>', url, obj._audited)

    def get_deleted_objects(self, objs, request):
        """Sales with units still being written are protected like sales with orders: the
        confirmation page names them and deletes nothing."""
        deleted, model_count, perms_needed, protected = super().get_deleted_objects(objs, request)
        for sale in objs:
            if sale_writes_in_flight(sale_id=sale.pk):
                protected = [*protected, _("%(sale)s: orders still being written") % {"sale": sale}]
        return deleted, model_count, perms_needed, protected

    def delete_model(self, request, obj):
        _delete_through(self, request, services.sale_delete, sale=obj)

    def delete_queryset(self, request, queryset):
        for sale in queryset.order_by("pk"):
            _delete_through(self, request, services.sale_delete, sale=sale)

    def response_delete(self, request, obj_display, obj_id):
        return _response_delete(self, request, obj_display, obj_id)

    @admin.display(description=_("live"))
    def live_link(self, obj):
        # The live page counts orders, so it lives with them (orders/admin.py); linked by name.
        return format_html('<a href="{}">{}</a>', reverse("admin:orders_sale_live", args=[obj.pk]), _("watch"))

    def get_form(self, request, obj=None, **kwargs):
        form = super().get_form(request, obj, **kwargs)
        form.base_fields["stock_count"].show_hidden_initial = True  # posts back the value shown
        return form

    @staticmethod
    def _stock_seen(form) -> int:
        field = form.fields["stock_count"]
        try:
            return int(field.to_python(form.data.get(form.add_initial_prefix("stock_count"))))
        except (TypeError, ValueError, ValidationError):
            return form.initial["stock_count"]

    def formfield_for_foreignkey(self, db_field, request, **kwargs):
        if db_field.name == "goods":
            kwargs["queryset"] = visible_to_merchant(Goods.objects.all(), user=request.user)
        return super().formfield_for_foreignkey(db_field, request, **kwargs)

    def save_model(self, request, obj, form, change):
        if not change:
            services.sale_create(sale=obj, actor=request.user)
            return
        changes = {name: form.cleaned_data[name] for name in form.changed_data if name != "stock_count"}
        # The stock field is edited as a number, applied as a difference from what the
        # merchant saw (the hidden initial value), so units sold since the form was loaded stay sold.
        stock_delta = obj.stock_count - self._stock_seen(form) if "stock_count" in form.changed_data else 0
        try:
            services.sale_update(
                sale=SeckillGoods.objects.get(pk=obj.pk), changes=changes, stock_delta=stock_delta, actor=request.user
            )
        except services.StockShortage as shortage:
            self.message_user(request, str(shortage), messages.ERROR)
        obj.refresh_from_db()


@admin.register(StockAudit)
class StockAuditAdmin(MerchantScopedAdmin):
    """Read-only: the log is written by the services that change the stock, never by hand."""

    owner_path = "sale__goods__owner"
    list_display = ("created_at", "sale", "delta", "reason", "actor", "reference", "note")
    list_filter = ("reason", ("sale", admin.RelatedOnlyFieldListFilter))
    search_fields = ("reference",)
    list_select_related = ("sale__goods", "actor")

    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False

    def has_delete_permission(self, request, obj=None):
        return False

    def changelist_view(self, request, extra_context=None):
        response = super().changelist_view(request, extra_context)
        changelist = getattr(response, "context_data", {}).get("cl")
        if changelist is not None:
            total = changelist.queryset.aggregate(total=Sum("delta"))["total"] or 0
            response.context_data["subtitle"] = _("Sum of the changes shown: %(total)s") % {"total": total}
        return response
