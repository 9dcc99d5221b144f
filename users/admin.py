from django.contrib import admin
from django.contrib.auth.admin import UserAdmin as BaseUserAdmin
from django.contrib.auth.forms import BaseUserCreationForm, UserChangeForm
from django.db import transaction
from django.template.response import TemplateResponse
from django.urls import path
from django.utils.html import format_html_join
from django.utils.safestring import mark_safe
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy
from rest_framework.authtoken.models import TokenProxy

from seckill_site.admin import shop_time_zone, yes_no
from users.addresses.selectors import addresses_of_user
from users.fields import MobileField
from users.models import Notice, User
from users.revocation import user_auth_revoke
from users.verification.services import registrations_by_ip


class UserCreationForm(BaseUserCreationForm):
    class Meta:
        model = User
        fields = ("mobile",)
        field_classes = {"mobile": MobileField}


class UserEditForm(UserChangeForm):
    class Meta:
        model = User
        fields = "__all__"
        field_classes = {"mobile": MobileField}


# DRF's token admin lists the tokens themselves, and deleting one there would skip the cache
# drop that revokes it: tokens end through users.revocation (the user's "log out everywhere").
admin.site.unregister(TokenProxy)


@admin.register(User)
class UserAdmin(BaseUserAdmin):
    add_form = UserCreationForm
    form = UserEditForm
    ordering = ("mobile",)
    list_display = ("mobile", "nickname", "staff", "login_count", "last_login", "date_joined")
    search_fields = ("mobile", "nickname")
    readonly_fields = ("last_login", "login_count", "date_joined", "address_book")
    fieldsets = (
        (None, {"fields": ("mobile", "password")}),
        (gettext_lazy("Profile"), {"fields": ("nickname", "avatar")}),
        (
            gettext_lazy("Permissions"),
            # No per-model permission rows: a merchant's rights come from owning the rows
            # (users.merchants.MerchantScopedAdmin) and the Merchants group.
            {"fields": ("is_active", "is_staff", "is_superuser", "groups")},
        ),
        (gettext_lazy("Activity"), {"fields": ("last_login", "login_count", "date_joined")}),
        (gettext_lazy("Address book"), {"fields": ("address_book",)}),
    )
    add_fieldsets = ((None, {"classes": ("wide",), "fields": ("mobile", "password1", "password2")}),)

    @admin.display(description=gettext_lazy("addresses"))
    def address_book(self, obj):
        """The shopper's addresses, to read: shoppers keep them (users.addresses.services keeps one
        default), and paid orders carry their own copy."""
        addresses = list(addresses_of_user(user=obj)) if obj.pk else []
        if not addresses:
            return "-"
        return format_html_join(
            mark_safe("<br>"),
            "{}{} {}, {} {} {}",
            [
                (_("(default) ") if a.is_default else "", a.recipient, a.phone, a.place, a.street, a.postcode)
                for a in addresses
            ],
        )

    @admin.display(description=gettext_lazy("staff status"), ordering="is_staff")
    def staff(self, obj):
        return yes_no(obj.is_staff)

    def get_urls(self):
        view = self.admin_site.admin_view(self.registrations_view)
        return [path("registrations/", view, name="users_user_registrations"), *super().get_urls()]

    def registrations_view(self, request):
        """Accounts created per client IP per hour (users.verification.registration_record):
        any staff member, merchants included, may look, since a farm of fresh accounts
        buying up their sale is their business."""
        context = {
            **self.admin_site.each_context(request),
            "title": _("New accounts per client IP and hour"),
            "rows": registrations_by_ip(hours=48),
            "zone": shop_time_zone(),
        }
        return TemplateResponse(request, "admin/users/registrations.html", context)

    def save_model(self, request, obj, form, change):
        """An admin's edit of a user (permissions, staff, active...) ends the user's sessions and
        tokens, so what was granted or taken away holds from the next request on. An admin
        editing themselves keeps the session they edit with (re-stamped after the revocation)."""
        super().save_model(request, obj, form, change)
        if change:
            user_id, own = obj.pk, obj.pk == request.user.pk

            def revoke() -> None:
                user_auth_revoke(user_id=user_id)
                if own:
                    request.session.cycle_key()

            transaction.on_commit(revoke)


@admin.register(Notice)
class NoticeAdmin(admin.ModelAdmin):
    """The messages texted to shoppers (users.notices), to read: who was told what, and why one
    was skipped or failed. Written by the sweeps alone, so nothing here changes them."""

    list_display = ("key", "kind", "status", "reason", "tries", "created_at", "sent_at")
    list_filter = ("kind", "status")
    search_fields = ("key",)
    readonly_fields = (
        "user",
        "kind",
        "key",
        "status",
        "reason",
        "text",
        "tries",
        "created_at",
        "claimed_at",
        "sent_at",
    )
    list_select_related = ("user",)

    def has_add_permission(self, request) -> bool:
        return False

    def has_change_permission(self, request, obj=None) -> bool:
        return False
