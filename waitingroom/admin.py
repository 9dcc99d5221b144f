"""The waiting rooms in the admin: a merchant sets up and switches the rooms of their own sales
(another merchant's are neither listed nor reachable), a superuser throws the shop-wide
switches, and both read the log of every change.

A page of its own rather than an inline on the sale's: the room's switches are actions on many
rooms at once, and the sale's page stays the sales app's.
"""

from datetime import datetime

from django.contrib import admin, messages
from django.core.exceptions import FieldDoesNotExist, PermissionDenied
from django.http import Http404, HttpResponseNotAllowed, HttpResponseRedirect
from django.urls import path, reverse
from django.utils import timezone
from django.utils.html import format_html, format_html_join
from django.utils.safestring import mark_safe
from django.utils.text import capfirst
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy, ngettext

from sales.admin_mixins import ReadOnlyAdminMixin
from sales.forms import LabelledSplitDateTime
from sales.models import Sale
from seckill_site.admin import list_time
from users.merchants import MerchantScopedAdmin, visible_to_merchant
from waitingroom import services
from waitingroom.models import ShopSwitches, WaitingRoom, WaitingRoomAction


def _yes_no(value: bool) -> str:
    return _("yes") if value else _("no")


@admin.register(WaitingRoom)
class WaitingRoomAdmin(MerchantScopedAdmin):
    owner_path = "sale__goods__owner"
    list_display = (
        "sale",
        "enabled_display",
        "opens_display",
        "admit_per_minute",
        "active_shoppers",
        "pass_minutes",
        "brake_display",
        "queue_all_display",
        "stop_display",
        "links",
    )
    list_filter = ("enabled", "queue_all", "stop_admitting", ("sale", admin.RelatedOnlyFieldListFilter))
    list_select_related = ("sale__goods",)
    fields = ("sale", "enabled", "prequeue_opens_at", "admit_per_minute", "active_shoppers", "pass_minutes", "brake")
    actions = ["queue_all_on", "queue_all_off", "stop_on", "stop_off"]

    change_form_template = "admin/waitingroom/waitingroom/change_form.html"

    def has_delete_permission(self, request, obj=None):
        return False  # a room is turned off, not deleted: one way off the nodes, and it is logged

    def get_readonly_fields(self, request, obj=None):
        return ("sale",) if obj is not None else ()

    def formfield_for_dbfield(self, db_field, request, **kwargs):
        if db_field.name == "prequeue_opens_at":
            # Each box named for what it holds: the admin's "Date:" and "Time:" label neither.
            kwargs["widget"] = LabelledSplitDateTime(
                date_label=gettext_lazy("Pre-queue opening date"), time_label=gettext_lazy("Pre-queue opening time")
            )
        return super().formfield_for_dbfield(db_field, request, **kwargs)

    def formfield_for_foreignkey(self, db_field, request, **kwargs):
        if db_field.name == "sale":
            sales = Sale.objects.filter(waiting_room__isnull=True).select_related("goods")
            kwargs["queryset"] = visible_to_merchant(sales, user=request.user, owner_path="goods__owner")
        return super().formfield_for_foreignkey(db_field, request, **kwargs)

    # Words, not Django's tick icons: their alternative text is English.
    @admin.display(description=gettext_lazy("on"), ordering="enabled")
    def enabled_display(self, obj):
        return _yes_no(obj.enabled)

    @admin.display(description=gettext_lazy("automatic brake"), ordering="brake")
    def brake_display(self, obj):
        return _yes_no(obj.brake)

    @admin.display(description=gettext_lazy("queue everyone"), ordering="queue_all")
    def queue_all_display(self, obj):
        return _yes_no(obj.queue_all)

    @admin.display(description=gettext_lazy("admitting stopped"), ordering="stop_admitting")
    def stop_display(self, obj):
        return _yes_no(obj.stop_admitting)

    @admin.display(description=gettext_lazy("pre-queue opens"), ordering="prequeue_opens_at")
    def opens_display(self, obj):
        return list_time(obj.prequeue_opens_at) if obj.prequeue_opens_at else _("at the start")

    @admin.display(description=gettext_lazy("see"))
    def links(self, obj):
        live = reverse("admin:orders_sale_live", args=[obj.sale_id])
        log = reverse("admin:waitingroom_waitingroomaction_changelist") + f"?sale__id__exact={obj.sale_id}"
        return format_html('<a href="{}">{}</a><br><a href="{}">{}</a>', live, _("Live view"), log, _("Changes"))

    def save_model(self, request, obj, form, change):
        services.room_settings_save(room=obj, actor=request.user)

    # --- the operator's switches, per sale: each room thrown is logged once -----------------------

    def get_urls(self):
        switch = path(
            "<int:object_id>/switch/<str:switch>/<str:state>/",
            self.admin_site.admin_view(self.switch_view),
            name="waitingroom_waitingroom_switch",
        )
        return [switch, *super().get_urls()]

    def change_view(self, request, object_id, form_url="", extra_context=None):
        room = self.get_queryset(request).filter(pk=object_id).first()
        if room is not None and self.has_change_permission(request, room):
            extra_context = {**(extra_context or {}), "switches": self._buttons(room)}
        return super().change_view(request, object_id, form_url, extra_context)

    def _buttons(self, room: WaitingRoom) -> list[dict]:
        """The room page's buttons: each switch's way to its other position."""
        queue_all = ("off", _("Let them in again")) if room.queue_all else ("on", _("Queue everyone now"))
        stop = ("off", _("Resume admitting")) if room.stop_admitting else ("on", _("Stop admitting"))
        return [
            {"url": reverse("admin:waitingroom_waitingroom_switch", args=[room.pk, name, state]), "label": label}
            for name, (state, label) in (("queue_all", queue_all), ("stop", stop))
        ]

    def switch_view(self, request, object_id: int, switch: str, state: str):
        """One button on the room's page: POST only, the merchant's own rooms only (404 else)."""
        if request.method != "POST":
            return HttpResponseNotAllowed(["POST"])
        room = self.get_queryset(request).select_related("sale").filter(pk=object_id).first()
        if room is None or switch not in services.SWITCHES or state not in ("on", "off"):
            raise Http404
        if not self.has_change_permission(request, room):
            raise PermissionDenied
        if services.room_switch(sale=room.sale, switch=switch, on=state == "on", actor=request.user):
            self.message_user(request, _("Done: the room's shoppers follow the switch within a second."))
        else:
            self.message_user(request, _("The switch was already in that position; nothing changed."), messages.WARNING)
        return HttpResponseRedirect(reverse("admin:waitingroom_waitingroom_change", args=[room.pk]))

    def _throw(self, request, queryset, switch: str, on: bool) -> int:
        rooms = queryset.select_related("sale").order_by("pk")
        return sum(services.room_switch(sale=room.sale, switch=switch, on=on, actor=request.user) for room in rooms)

    @admin.action(description=gettext_lazy("Queue everyone now"))
    def queue_all_on(self, request, queryset):
        n = self._throw(request, queryset, "queue_all", True)
        message = ngettext("Everyone queued in %(n)d waiting room.", "Everyone queued in %(n)d waiting rooms.", n)
        self.message_user(request, message % {"n": n})

    @admin.action(description=gettext_lazy("Let them in again"))
    def queue_all_off(self, request, queryset):
        n = self._throw(request, queryset, "queue_all", False)
        message = ngettext("Let in again in %(n)d waiting room.", "Let in again in %(n)d waiting rooms.", n)
        self.message_user(request, message % {"n": n})

    @admin.action(description=gettext_lazy("Stop admitting"))
    def stop_on(self, request, queryset):
        n = self._throw(request, queryset, "stop", True)
        message = ngettext("Admitting stopped in %(n)d waiting room.", "Admitting stopped in %(n)d waiting rooms.", n)
        self.message_user(request, message % {"n": n})

    @admin.action(description=gettext_lazy("Resume admitting"))
    def stop_off(self, request, queryset):
        n = self._throw(request, queryset, "stop", False)
        message = ngettext("Admitting resumed in %(n)d waiting room.", "Admitting resumed in %(n)d waiting rooms.", n)
        self.message_user(request, message % {"n": n})


@admin.register(ShopSwitches)
class ShopSwitchesAdmin(ReadOnlyAdminMixin, admin.ModelAdmin):
    """The shop-wide switches, superusers only: one row, thrown by its actions, never edited."""

    list_display = ("__str__", "queue_all_display", "stop_display", "changed_display")
    actions = ["queue_all_on", "queue_all_off", "stop_on", "stop_off"]

    def has_module_permission(self, request):
        return request.user.is_superuser

    def has_view_permission(self, request, obj=None):
        return request.user.is_superuser

    def get_queryset(self, request):
        services.shop_switches()  # the row, made on first sight
        return super().get_queryset(request)

    @admin.display(description=gettext_lazy("queue everyone"))
    def queue_all_display(self, obj):
        return _yes_no(obj.queue_all)

    @admin.display(description=gettext_lazy("admitting stopped"))
    def stop_display(self, obj):
        return _yes_no(obj.stop_admitting)

    @admin.display(description=gettext_lazy("changed"), ordering="updated_at")
    def changed_display(self, obj):
        return list_time(obj.updated_at)

    def _throw(self, request, switch: str, on: bool) -> None:
        if services.shop_switch(switch=switch, on=on, actor=request.user):
            self.message_user(request, _("Done: every sale's waiting room follows the switch within a second."))
        else:
            self.message_user(request, _("The switch was already in that position; nothing changed."), messages.WARNING)

    @admin.action(description=gettext_lazy("Queue everyone now, in every sale"))
    def queue_all_on(self, request, queryset):
        self._throw(request, "queue_all", True)

    @admin.action(description=gettext_lazy("Let them in again, in every sale"))
    def queue_all_off(self, request, queryset):
        self._throw(request, "queue_all", False)

    @admin.action(description=gettext_lazy("Stop admitting, in every sale"))
    def stop_on(self, request, queryset):
        self._throw(request, "stop", True)

    @admin.action(description=gettext_lazy("Resume admitting, in every sale"))
    def stop_off(self, request, queryset):
        self._throw(request, "stop", False)


@admin.register(WaitingRoomAction)
class WaitingRoomActionAdmin(ReadOnlyAdminMixin, MerchantScopedAdmin):
    """The log of the rooms' changes, read-only: a merchant reads their sales' (the shop-wide
    switches' rows have no sale, so only a superuser sees them)."""

    owner_path = "sale__goods__owner"
    list_display = ("when_display", "scope_display", "action", "by_display", "change_display")
    list_filter = ("action", ("sale", admin.RelatedOnlyFieldListFilter))
    list_select_related = ("sale__goods", "actor")
    fields = ("created_at", "sale", "action", "actor", "actor_name", "change_display")
    readonly_fields = fields

    @admin.display(description=gettext_lazy("when"), ordering="created_at")
    def when_display(self, obj):
        return timezone.localtime(obj.created_at).strftime("%Y-%m-%d %H:%M:%S")

    @admin.display(description=gettext_lazy("sale"))
    def scope_display(self, obj):
        return obj.sale if obj.sale_id else _("every sale")

    @admin.display(description=gettext_lazy("by"))
    def by_display(self, obj):
        return obj.actor or obj.actor_name or "–"

    @admin.display(description=gettext_lazy("change"))
    def change_display(self, obj):
        """Each field the action changed, from what to what, in the merchant's words."""
        lines = [
            (_field_words(name), _value_words(obj.old.get(name)), _value_words(value))
            for name, value in obj.new.items()
        ]
        return format_html_join(mark_safe("<br>"), "{}: {} → {}", lines)


# The switches as the log names them (waitingroom.services.SWITCHES), beside the room's fields.
_SWITCH_FIELDS = {name: field for name, (field, _on, _off) in services.SWITCHES.items()}


def _field_words(name: str) -> str:
    try:
        field = WaitingRoom._meta.get_field(_SWITCH_FIELDS.get(name, name))
    except FieldDoesNotExist:
        return name
    return str(capfirst(getattr(field, "verbose_name", name)))


def _value_words(value) -> str:
    if value is None:
        return "–"
    if isinstance(value, bool):
        return _yes_no(value)
    if isinstance(value, str):
        try:
            return list_time(datetime.fromisoformat(value))
        except ValueError:
            return value
    return str(value)
