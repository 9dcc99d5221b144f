from django.contrib import admin
from django.contrib.auth.admin import UserAdmin as BaseUserAdmin
from django.contrib.auth.forms import BaseUserCreationForm, UserChangeForm

from users.forms import MobileField
from users.models import User


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
