from django.contrib import admin
from django.contrib.auth.admin import UserAdmin as BaseUserAdmin
from django.contrib.auth.forms import BaseUserCreationForm, UserChangeForm
from django.db import transaction

from users.forms import MobileField
from users.models import User
from users.services import user_auth_revoke


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


@admin.register(User)
class UserAdmin(BaseUserAdmin):
    add_form = UserCreationForm
    form = UserEditForm
    ordering = ("mobile",)
    list_display = ("mobile", "nickname", "is_staff", "login_count", "last_login", "date_joined")
    search_fields = ("mobile", "nickname")
    fieldsets = (
        (None, {"fields": ("mobile", "password")}),
        ("Profile", {"fields": ("nickname", "avatar")}),
        ("Permissions", {"fields": ("is_active", "is_staff", "is_superuser", "groups", "user_permissions")}),
        ("Activity", {"fields": ("last_login", "login_count", "date_joined")}),
    )
    add_fieldsets = ((None, {"classes": ("wide",), "fields": ("mobile", "password1", "password2")}),)
    readonly_fields = ("last_login", "login_count", "date_joined")

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
