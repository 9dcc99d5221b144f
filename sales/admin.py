"""Merchant admin of sales: a merchant sees and edits only their own sales, their draws and
stock logs, and their goods' page gains the goods' sales.

Written for the merchant at a 1280-pixel screen: the columns that matter (start, end, what is
left, revenue, the live view) fit without scrolling, every word is in the merchant's language
and every time is in the shop's time zone (settings.TIME_ZONE). The sale's form is sales.forms;
each sale's orders and revenue on the sale list come from orders (sales.selectors.sales_with_list_figures).
"""

from django.contrib import admin, messages
from django.contrib.admin.views.main import ChangeList
from django.db.models import Count, Func, IntegerField, OuterRef, Subquery, Sum
from django.db.models.functions import Coalesce
from django.urls import reverse
from django.utils import timezone
from django.utils.html import format_html, format_html_join
from django.utils.safestring import mark_safe
from django.utils.text import capfirst
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy, ngettext

from goods.admin import GoodsAdmin, delete_through, response_after_delete
from goods.models import Goods
from sales import services
from sales.admin_mixins import ReadOnlyAdminMixin
from sales.forms import SaleForm
from sales.models import Sale, SaleDraw, SaleStatus, StockAudit
from sales.selectors import sale_delete_blockers, sales_sold_out, sales_with_list_figures, stock_left
from seckill_site.admin import list_time, money
from users.merchants import MerchantScopedAdmin, visible_to_merchant


class SaleInline(admin.TabularInline):
    model = Sale
    extra = 0
    can_delete = False  # deleted on their own page, through services.sale_delete (Redis and caches too)
    fields = ("seckill_price", "stock_count", "start_at", "end_at")
    show_change_link = True

    def has_add_permission(self, request, obj=None):
        return False  # sales are created on their own page, where saving loads them into Redis

    def has_change_permission(self, request, obj=None):
        return False


def blocked_deletion(objs, blockers_of) -> list:
    """get_deleted_objects in the merchant's words. A sale's stock log is part of the sale
    and goes with it (the merchant cannot delete log rows one by one, which Django would
    report as a missing permission); what really stops a deletion is named per sale."""
    protected = []
    for obj in objs:
        for sale, reasons in blockers_of(obj):
            protected += [format_html("<strong>{}</strong>: {}", sale, reason) for reason in reasons]
    return protected


admin.site.unregister(Goods)


@admin.register(Goods)
class GoodsWithSalesAdmin(GoodsAdmin):
    """The goods' page with their sales: a column linking to them, the sales listed below the
    goods, and what stops the goods' deletion named per sale (goods_delete takes their sales)."""

    inlines = [SaleInline]
    sale_columns = ["sales_count"]

    def get_queryset(self, request):
        return super().get_queryset(request).annotate(_sales=Count("sales"))

    @admin.display(description=gettext_lazy("sales"), ordering="_sales")
    def sales_count(self, obj):
        url = reverse("admin:sales_sale_changelist") + f"?goods__id__exact={obj.pk}"
        return format_html('<a href="{}">{}</a>', url, obj._sales)

    def get_deleted_objects(self, objs, request):
        deleted, model_count, _perms_needed, _protected = super().get_deleted_objects(objs, request)

        def blockers(goods):
            for sale in goods.sales.select_related("goods").order_by("start_at"):
                yield sale, sale_delete_blockers(sale=sale)

        # The goods' sales go with them (goods_delete deletes each through sale_delete).
        return deleted, model_count, set(), blocked_deletion(objs, blockers)


class SaleStatusFilter(admin.SimpleListFilter):
    """On now, coming up, ended, and sold out (on, with no unit left): what a merchant looks
    for (a start date filter was not)."""

    title = gettext_lazy("status")
    parameter_name = "status"
    SOLD_OUT = "sold_out"

    def lookups(self, request, model_admin):
        statuses = [(str(value), capfirst(label)) for value, label in SaleStatus.choices]
        return [*statuses[:2], (self.SOLD_OUT, _("Sold out")), *statuses[2:]]

    def queryset(self, request, queryset):
        now = timezone.now()
        if self.value() == self.SOLD_OUT:
            return sales_sold_out(sales=queryset, now=now)
        return {
            str(SaleStatus.NOT_STARTED.value): queryset.filter(start_at__gt=now),
            str(SaleStatus.ON.value): queryset.filter(start_at__lte=now, end_at__gt=now),
            str(SaleStatus.ENDED.value): queryset.filter(end_at__lte=now),
        }.get(self.value(), queryset)


class SaleChangeList(ChangeList):
    def get_results(self, request):
        """The page's sales with their live stock: one Redis round trip for the page, not one per row."""
        super().get_results(request)
        live = stock_left([sale.pk for sale in self.result_list])
        for sale in self.result_list:
            sale._left = live[sale.pk]


@admin.register(Sale)
class SaleAdmin(MerchantScopedAdmin):
    owner_path = "goods__owner"
    form = SaleForm
    list_display = (
        "goods",
        "price_display",
        "status_display",
        "start_display",
        "end_display",
        "left_display",
        "paid_display",
        "unpaid_display",
        "revenue_display",
        "links",
    )
    list_filter = (SaleStatusFilter, ("goods", admin.RelatedOnlyFieldListFilter))
    # The draw's own settings in a fieldset of their own, which static/js/sale-admin.js hides
    # while the sale is first come, first served; without the script they stay, marked as the
    # draw's.
    fieldsets = (
        (None, {"fields": ("goods", "seckill_price", "stock_count", "start_at", "end_at", "admission")}),
        (
            gettext_lazy("Draw sales only"),
            {"fields": ("draw_window_s", "entries_open_at"), "classes": ("draw-settings",)},
        ),
        (None, {"fields": ("confirm",)}),
    )

    class Media:
        js = ("js/sale-admin.js",)

    delete_confirmation_template = "admin/goods/delete_confirmation.html"
    delete_selected_confirmation_template = "admin/goods/delete_selected_confirmation.html"
    # Stock is edited as "units left to sell": lowering it below what Redis handed out makes
    # later orders fail cleanly in the database (conditional UPDATE), never oversell.

    def get_queryset(self, request):
        # A subquery, not a join: joined with the orders the audit rows would be counted once per order.
        audited = (
            StockAudit.objects.filter(sale=OuterRef("pk")).values("sale").annotate(total=Sum("delta")).values("total")
        )
        # Each sale's orders and revenue come from orders (sale_list_annotation_add): goods cannot import it.
        sales = sales_with_list_figures(super().get_queryset(request).select_related("goods"))
        return sales.annotate(_audited=Coalesce(Subquery(audited), 0))

    def get_changelist(self, request, **kwargs):
        return SaleChangeList

    @admin.display(description=gettext_lazy("sale price"), ordering="seckill_price")
    def price_display(self, obj):
        return money(obj.seckill_price)

    @admin.display(description=gettext_lazy("status"))
    def status_display(self, obj):
        status = obj.status_at()
        css = {SaleStatus.NOT_STARTED: "soon", SaleStatus.ON: "on", SaleStatus.ENDED: "ended"}[status]
        return format_html('<span class="sale-status {}">{}</span>', css, capfirst(status.label))

    @admin.display(description=gettext_lazy("start"), ordering="start_at")
    def start_display(self, obj):
        return list_time(obj.start_at)

    @admin.display(description=gettext_lazy("end"), ordering="end_at")
    def end_display(self, obj):
        return list_time(obj.end_at)

    @admin.display(description=gettext_lazy("left"))
    def left_display(self, obj):
        """Units shoppers can still buy: the live counter the shop sells from; the database's
        figure when the sale is not loaded for selling (it also counts units being ordered)."""
        live = getattr(obj, "_left", None)
        return obj.stock_count if live is None else live

    @admin.display(description=gettext_lazy("paid"), ordering="orders_paid")
    def paid_display(self, obj):
        return obj.orders_paid

    @admin.display(description=gettext_lazy("unpaid"), ordering="orders_unpaid")
    def unpaid_display(self, obj):
        return obj.orders_unpaid

    @admin.display(description=gettext_lazy("revenue"), ordering="revenue")
    def revenue_display(self, obj):
        return money(obj.revenue or 0)

    @admin.display(description=gettext_lazy("see"))
    def links(self, obj):
        orders = reverse("admin:orders_order_changelist") + f"?sale__id__exact={obj.pk}"
        audit = reverse("admin:sales_stockaudit_changelist") + f"?sale__id__exact={obj.pk}"
        live = reverse("admin:orders_sale_live", args=[obj.pk])
        return format_html_join(
            mark_safe("<br>"),
            '<a href="{}" class="{}">{}</a>',
            [
                (live, "live-link", _("Live view")),
                (orders, "orders-link", _("Orders")),
                (audit, "audit-link", _("Stock log (%(total)s)") % {"total": obj._audited}),
            ],
        )

    # --- deleting -------------------------------------------------------------------------

    def get_deleted_objects(self, objs, request):
        deleted, model_count, _perms_needed, _protected = super().get_deleted_objects(objs, request)
        protected = blocked_deletion(objs, lambda sale: [(sale, sale_delete_blockers(sale=sale))])
        return deleted, model_count, set(), protected

    def delete_model(self, request, obj):
        delete_through(self, request, services.sale_delete, sale=obj)

    def delete_queryset(self, request, queryset):
        for sale in queryset.order_by("pk"):
            delete_through(self, request, services.sale_delete, sale=sale)

    def response_delete(self, request, obj_display, obj_id):
        return response_after_delete(self, request, obj_display, obj_id)

    def render_delete_form(self, request, context):
        obj = context.get("object")
        if obj is not None:
            context["sale_on_now"] = obj.status_at() == SaleStatus.ON
            context["change_url"] = reverse("admin:sales_sale_change", args=[obj.pk])
        return super().render_delete_form(request, context)

    # --- editing ----------------------------------------------------------------------------

    def formfield_for_foreignkey(self, db_field, request, **kwargs):
        if db_field.name == "goods":
            kwargs["queryset"] = visible_to_merchant(Goods.objects.all(), user=request.user)
        return super().formfield_for_foreignkey(db_field, request, **kwargs)

    def save_model(self, request, obj, form, change):
        if not change:
            services.sale_create(sale=obj, actor=request.user)
            return
        changes = {name: form.cleaned_data[name] for name in form.changed_values(form.cleaned_data) - {"stock_count"}}
        # The stock field is edited as a number, applied as a difference from what the
        # merchant saw (the hidden initial value), so units sold since the form was loaded stay sold.
        stock_delta = obj.stock_count - form.stock_seen if "stock_count" in form.changed_data else 0
        try:
            services.sale_update(
                sale=Sale.objects.get(pk=obj.pk), changes=changes, stock_delta=stock_delta, actor=request.user
            )
        except services.StockShortage as shortage:
            self.message_user(request, str(shortage), messages.ERROR)
        obj.refresh_from_db()


@admin.register(SaleDraw)
class SaleDrawAdmin(ReadOnlyAdminMixin, MerchantScopedAdmin):
    """A draw sale's draw, read-only, for the merchant's audit (docs/draw.md): the seed and its
    hash, the sorted entrant ids, the units drawn and the winners. Written by the draw alone."""

    owner_path = "sale__goods__owner"
    list_display = ("sale", "seed_sha256", "drawn_display", "units", "entrants_display", "winners_display")
    list_select_related = ("sale__goods",)
    fields = ("sale", "seed_sha256", "seed_display", "drawn_display", "units", "entrants_display", "winner_ids")
    readonly_fields = fields

    @admin.display(description=gettext_lazy("drawn"), ordering="drawn_at")
    def drawn_display(self, obj):
        return timezone.localtime(obj.drawn_at).strftime("%Y-%m-%d %H:%M:%S") if obj.drawn_at else "–"

    @admin.display(description=gettext_lazy("seed"))
    def seed_display(self, obj):
        # Secret until the draw, from the merchant's screen too: nobody can compute the draw ahead.
        return obj.seed if obj.drawn_at else "–"

    @admin.display(description=gettext_lazy("entrants"))
    def entrants_display(self, obj):
        return obj.entrants

    @admin.display(description=gettext_lazy("winners"))
    def winners_display(self, obj):
        return obj.winners

    def get_queryset(self, request):
        # Counted in PostgreSQL: a big draw's entrant list is megabytes, never loaded here.
        return (
            super()
            .get_queryset(request)
            .defer("entrant_ids")
            .annotate(
                entrants=Func("entrant_ids", function="jsonb_array_length", output_field=IntegerField()),
                winners=Func("winner_ids", function="jsonb_array_length", output_field=IntegerField()),
            )
        )


# --- the stock log ------------------------------------------------------------------------------

# Who cancelled (StockAuditDetail's "cancelled_by"), in the merchant's words.
_CANCELLED_BY = {
    "shopper": gettext_lazy("cancelled by shopper"),
    "merchant": gettext_lazy("cancelled by merchant"),
}


def stock_detail_words(detail: dict) -> str:
    """A stock change's detail (sales.models.StockAuditDetail) in the merchant's language; ""
    when it holds nothing to say beyond the reason (an expiry, a merchant's edit)."""
    if "stock_after" in detail:
        figures = {"after": detail["stock_after"], "b1": detail.get("buyers_before"), "b2": detail.get("buyers_after")}
        if detail.get("stock_before") is None:  # Redis had lost the sale: loaded again, not corrected
            return _("units on sale restored to %(after)s; buyers from %(b1)s to %(b2)s") % figures
        return _("units on sale corrected from %(before)s to %(after)s; buyers from %(b1)s to %(b2)s") % {
            **figures,
            "before": detail["stock_before"],
        }
    if detail.get("created"):
        return _("sale created")
    if "orders" in detail:
        n = detail["orders"]
        return ngettext("%(n)d order placed together", "%(n)d orders placed together", n) % {"n": n}
    if detail.get("cancelled_by") in _CANCELLED_BY:
        return str(_CANCELLED_BY[detail["cancelled_by"]])
    # A note from before the detail that the migration could not read: shown as it was written.
    return detail.get("note", "")


@admin.register(StockAudit)
class StockAuditAdmin(ReadOnlyAdminMixin, MerchantScopedAdmin):
    """Read-only: the log is written by the services that change the stock, never by hand."""

    owner_path = "sale__goods__owner"
    list_display = ("when_display", "sale", "delta_display", "reason", "actor", "reference_display", "detail_display")
    list_filter = ("reason", ("sale", admin.RelatedOnlyFieldListFilter))
    search_fields = ("reference",)
    list_select_related = ("sale__goods", "actor")
    fields = ("created_at", "sale", "delta", "reason", "actor", "reference", "detail_display")
    readonly_fields = fields

    @admin.display(description=gettext_lazy("when"), ordering="created_at")
    def when_display(self, obj):
        return timezone.localtime(obj.created_at).strftime("%Y-%m-%d %H:%M:%S")

    @admin.display(description=gettext_lazy("change"), ordering="delta")
    def delta_display(self, obj):
        return f"{obj.delta:+d}" if obj.delta else "0"

    @admin.display(description=gettext_lazy("order number"), ordering="reference")
    def reference_display(self, obj):
        # A batch names its first and last order: one per line, so the column stays narrow.
        first, sep, last = obj.reference.partition("…")
        return format_html("{}<br>…{}", first, last) if sep else obj.reference

    @admin.display(description=gettext_lazy("note"))
    def detail_display(self, obj):
        return stock_detail_words(obj.detail)

    def changelist_view(self, request, extra_context=None):
        response = super().changelist_view(request, extra_context)
        changelist = getattr(response, "context_data", {}).get("cl")
        if changelist is not None:
            total = changelist.queryset.aggregate(total=Sum("delta"))["total"] or 0
            response.context_data["subtitle"] = _("Sum of the changes shown: %(total)s") % {"total": total}
        return response
