"""The money of the merchant's orders in the admin: the order's payments and refunds (inlines
on its page, and the refund form), every payment, and what reconciliation found."""

from django import forms
from django.contrib import admin, messages
from django.urls import reverse
from django.utils import timezone
from django.utils.html import format_html, format_html_join
from django.utils.text import capfirst
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy, ngettext

from orders.payments.models import Payment, PaymentMismatch, Refund
from orders.payments.providers import provider_choices, provider_label
from seckill_site.admin import list_time, money
from users.merchants import MerchantScopedAdmin, is_merchant, visible_to_merchant


def amount_with_currency(amount, currency: str) -> str:
    """¥9.90 in the shop's usual way (seckill_site.admin.money); another currency by its code."""
    return money(amount) if currency == "CNY" else f"{amount:,.2f} {currency}"


def person(user) -> str:
    """Who did it: a nickname, else the mobile number; "-" for the shop itself."""
    if user is None:
        return "-"
    return user.nickname or user.mobile


def payment_closed(payment: Payment) -> str:
    """When the attempt was closed, marked when the provider never confirmed the close."""
    if payment.closed_at and not payment.close_confirmed:
        # Released without the provider's word: a payment arriving after it is refunded.
        return format_html(
            '{} <span class="merchant-warning" title="{}">{}</span>',
            list_time(payment.closed_at),
            _("The provider could not be reached to confirm the close; a payment arriving later is refunded."),
            _("unconfirmed"),
        )
    return list_time(payment.closed_at)


class ProviderFilter(admin.SimpleListFilter):
    """The registered providers (orders.payments.providers), by their labels."""

    title = gettext_lazy("provider")
    parameter_name = "provider"

    def lookups(self, request, model_admin):
        return provider_choices()

    def queryset(self, request, queryset):
        return queryset if self.value() is None else queryset.filter(provider=self.value())


class _OrderMoneyInline(admin.TabularInline):
    """Rows of the order's money on its page, read only: payments and refunds change through
    orders.payments, never by hand. Shown on the order's page, which is scoped to the merchant
    already (OrderAdmin.get_queryset); the order is checked again here all the same."""

    model = Payment
    template = "admin/orders/order/money_inline.html"
    extra = 0
    max_num = 0
    can_delete = False

    def has_view_permission(self, request, obj=None):
        if request.user.is_superuser:
            return True
        return is_merchant(request) and (obj is None or obj.goods.owner_id == request.user.pk)

    def has_add_permission(self, request, obj=None):
        return False

    def has_change_permission(self, request, obj=None):
        return False

    def has_delete_permission(self, request, obj=None):
        return False


class PaymentColumns:
    """The columns of a payment, for its own list and for the order's table of payments."""

    @admin.display(description=gettext_lazy("provider"), ordering="provider")
    def provider_display(self, obj):
        return capfirst(provider_label(obj.provider))

    @admin.display(description=gettext_lazy("status"), ordering="status")
    def status_display(self, obj):
        return capfirst(obj.get_status_display())

    @admin.display(description=gettext_lazy("amount"), ordering="amount")
    def amount_display(self, obj):
        return amount_with_currency(obj.amount, obj.currency)

    @admin.display(description=gettext_lazy("started at"), ordering="created_at")
    def started_display(self, obj):
        return list_time(obj.created_at)

    @admin.display(description=gettext_lazy("paid at"), ordering="succeeded_at")
    def paid_display(self, obj):
        return list_time(obj.succeeded_at)

    @admin.display(description=gettext_lazy("closed at"))
    def closed_display(self, obj):
        return payment_closed(obj)


class PaymentInline(PaymentColumns, _OrderMoneyInline):
    """Each attempt to pay the order, oldest first."""

    fields = (
        "provider_display",
        "trade_no",
        "provider_ref",
        "amount_display",
        "status_display",
        "started_display",
        "paid_display",
        "closed_display",
    )
    readonly_fields = fields

    def get_queryset(self, request):
        return super().get_queryset(request).order_by("created_at", "pk")


class RefundInline(_OrderMoneyInline):
    """The refund of each payment that has one (a Refund belongs to a payment, not to the
    order, so these are the order's payments with a refund, showing the refund's fields)."""

    verbose_name = Refund._meta.verbose_name
    verbose_name_plural = Refund._meta.verbose_name_plural
    fields = (
        "trade_no",
        "refund_kind",
        "refund_reason",
        "refund_status",
        "refund_actor",
        "refund_requested",
        "refund_refunded",
        "refund_tries",
        "refund_last_error",
    )
    readonly_fields = fields

    def get_queryset(self, request):
        return (
            super()
            .get_queryset(request)
            .filter(refund__isnull=False)
            .select_related("refund__actor")
            .order_by("refund__created_at", "pk")
        )

    @admin.display(description=gettext_lazy("kind"))
    def refund_kind(self, obj):
        return capfirst(obj.refund.get_kind_display())

    @admin.display(description=gettext_lazy("reason"))
    def refund_reason(self, obj):
        return obj.refund.reason or "-"

    @admin.display(description=gettext_lazy("status"))
    def refund_status(self, obj):
        return capfirst(obj.refund.get_status_display())

    @admin.display(description=gettext_lazy("by"))
    def refund_actor(self, obj):
        return person(obj.refund.actor)

    @admin.display(description=gettext_lazy("requested at"))
    def refund_requested(self, obj):
        return list_time(obj.refund.created_at)

    @admin.display(description=gettext_lazy("refunded at"))
    def refund_refunded(self, obj):
        return list_time(obj.refund.refunded_at)

    @admin.display(description=gettext_lazy("tries"))
    def refund_tries(self, obj):
        return obj.refund.tries

    @admin.display(description=gettext_lazy("last error"))
    def refund_last_error(self, obj):
        return obj.refund.last_error or "-"


class RefundForm(forms.Form):
    reason = forms.CharField(
        label=capfirst(gettext_lazy("reason")),
        max_length=Refund._meta.get_field("reason").max_length,
        widget=forms.Textarea(attrs={"rows": 3, "cols": 60}),
        help_text=gettext_lazy("Kept with the refund and in the order's history."),
        error_messages={"required": gettext_lazy("Say why the order is refunded.")},
    )


@admin.register(Payment)
class PaymentAdmin(PaymentColumns, MerchantScopedAdmin):
    """Every attempt to pay the merchant's orders, read only (orders.payments writes them)."""

    owner_path = "order__goods__owner"
    merchant_can_add = False
    merchant_can_delete = False
    list_display = (
        "trade_no",
        "order_link",
        "provider_display",
        "amount_display",
        "status_display",
        "started_display",
        "paid_display",
    )
    list_filter = ("status", ProviderFilter, "created_at")
    search_fields = ("trade_no", "order__order_no")
    fields = (
        "trade_no",
        "order_link",
        "provider_display",
        "provider_ref",
        "amount_display",
        "status_display",
        "started_display",
        "paid_display",
        "closed_display",
        "refund_display",
    )
    readonly_fields = fields

    def get_queryset(self, request):
        return super().get_queryset(request).select_related("order__goods", "refund")

    @admin.display(description=gettext_lazy("order"), ordering="order__order_no")
    def order_link(self, obj):
        return format_html('<a href="{}">{}</a>', reverse("admin:orders_order_change", args=[obj.order_id]), obj.order)

    @admin.display(description=gettext_lazy("refund"))
    def refund_display(self, obj):
        refund = getattr(obj, "refund", None)
        if refund is None:
            return "-"
        return format_html(
            "{} · {} · {}", refund.request_no, capfirst(refund.get_status_display()), list_time(refund.created_at)
        )

    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False

    def has_delete_permission(self, request, obj=None):
        return False


MISMATCH_DETAIL_KEYS = {
    "shop": gettext_lazy("shop"),
    "provider": gettext_lazy("provider"),
    "detail": gettext_lazy("detail"),
}
# A mismatch found by the shop's own checks (orders.payments.reconcile.money_check) has no provider.
NO_PROVIDER = "-"


class MismatchProviderFilter(ProviderFilter):
    """The providers, and the findings of the shop's own checks (no provider)."""

    def lookups(self, request, model_admin):
        return [*super().lookups(request, model_admin), (NO_PROVIDER, _("none (the shop's own check)"))]

    def queryset(self, request, queryset):
        value = self.value()
        if value is None:
            return queryset
        return queryset.filter(provider="" if value == NO_PROVIDER else value)


class MismatchKindFilter(admin.SimpleListFilter):
    """The kinds found among the rows this user sees, in their language."""

    title = gettext_lazy("kind")
    parameter_name = "kind"

    def lookups(self, request, model_admin):
        kinds = model_admin.get_queryset(request).order_by("kind").values_list("kind", flat=True).distinct()
        return [(kind, capfirst(_(kind))) for kind in kinds]

    def queryset(self, request, queryset):
        return queryset if self.value() is None else queryset.filter(kind=self.value())


@admin.register(PaymentMismatch)
class PaymentMismatchAdmin(MerchantScopedAdmin):
    """What reconciliation found amiss, read only but for marking a finding resolved. A merchant
    sees the findings about their own orders' payments (the finding's trade number is one of
    theirs)."""

    merchant_can_add = False
    merchant_can_delete = False
    list_display = (
        "day",
        "provider_display",
        "kind_display",
        "trade_no",
        "detail_display",
        "found_display",
        "resolved_display",
    )
    list_filter = ("day", MismatchKindFilter, MismatchProviderFilter)
    search_fields = ("trade_no",)
    fields = list_display
    readonly_fields = fields
    actions = ["mark_resolved"]

    def get_queryset(self, request):
        queryset = admin.ModelAdmin.get_queryset(self, request)
        if request.user.is_superuser:
            return queryset
        if not is_merchant(request):
            return queryset.none()
        return queryset.filter(trade_no__in=self._trade_numbers(request))

    @staticmethod
    def _trade_numbers(request):
        payments = visible_to_merchant(Payment.objects.all(), user=request.user, owner_path="order__goods__owner")
        return payments.values("trade_no")

    def _owns(self, request, obj) -> bool:
        return obj is None or self._trade_numbers(request).filter(trade_no=obj.trade_no).exists()

    @admin.display(description=gettext_lazy("provider"), ordering="provider")
    def provider_display(self, obj):
        if not obj.provider:
            return "-"
        return provider_label(obj.provider)

    @admin.display(description=gettext_lazy("kind"), ordering="kind")
    def kind_display(self, obj):
        return capfirst(_(obj.kind))  # stored in English (orders.payments.reconcile)

    @admin.display(description=gettext_lazy("detail"))
    def detail_display(self, obj):
        detail = obj.detail if isinstance(obj.detail, dict) else {"detail": obj.detail}
        return (
            format_html_join(
                "; ", "{}: {}", ((MISMATCH_DETAIL_KEYS.get(key, key), value) for key, value in sorted(detail.items()))
            )
            or "-"
        )

    @admin.display(description=gettext_lazy("found at"), ordering="found_at")
    def found_display(self, obj):
        return list_time(obj.found_at)

    @admin.display(description=gettext_lazy("resolved at"), ordering="resolved_at")
    def resolved_display(self, obj):
        return list_time(obj.resolved_at)

    @admin.action(description=gettext_lazy("Mark resolved"), permissions=["resolve"])
    def mark_resolved(self, request, queryset):
        # The queryset is already scoped to this user's findings (get_queryset).
        now = timezone.now()
        rows = list(queryset.filter(resolved_at=None).order_by("pk"))
        PaymentMismatch.objects.filter(pk__in=[row.pk for row in rows], resolved_at=None).update(resolved_at=now)
        for row in rows:
            self.log_change(request, row, _("Marked resolved."))
        message = ngettext("Marked %(n)d mismatch resolved.", "Marked %(n)d mismatches resolved.", len(rows)) % {
            "n": len(rows)
        }
        self.message_user(request, message, messages.SUCCESS)

    def has_resolve_permission(self, request):
        return MerchantScopedAdmin.has_change_permission(self, request)

    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False

    def has_delete_permission(self, request, obj=None):
        return False
