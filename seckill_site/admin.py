"""Admin helpers every app shares: times, money, yes and no, and secret fields kept unqueryable."""

from functools import cache

from django.contrib.admin.views.main import ChangeList
from django.core.exceptions import FieldDoesNotExist
from django.db.models import Model
from django.db.models.constants import LOOKUP_SEP
from django.templatetags.static import static
from django.utils import timezone
from django.utils.html import format_html
from django.utils.translation import gettext as _
from django.utils.translation import gettext_noop

# Django admin strings its zh-Hans catalogue lacks, marked so makemessages keeps them in this
# project's catalogue, which Django reads before its own.
DJANGO_ADMIN_WORDS = (
    gettext_noop("Model name"),
    gettext_noop("Add link"),
    gettext_noop("Change or view list link"),
    gettext_noop("After you’ve created a user, you’ll be able to edit more user options."),
    gettext_noop("Error:"),  # the title of a form sent back with errors
)


def yes_no(value: bool) -> str:
    """Django's tick or cross icon, named in the merchant's language (Django's alt is English)."""
    icon = static(f"admin/img/icon-{'yes' if value else 'no'}.svg")
    return format_html('<img src="{}" alt="{}">', icon, _("Yes") if value else _("No"))


LIST_TIME = "%Y-%m-%d %H:%M"


def list_time(value) -> str:
    return timezone.localtime(value).strftime(LIST_TIME) if value else "-"


def money(value) -> str:
    return f"¥{value:,.2f}" if value is not None else "-"


def shop_time_zone() -> dict[str, str]:
    """The shop's zone (settings.TIME_ZONE) and its current UTC offset: "Asia/Shanghai", "UTC+08:00"."""
    offset = timezone.localtime().strftime("%z")  # "+0800"
    return {"name": timezone.get_current_timezone_name(), "offset": f"UTC{offset[:3]}:{offset[3:]}"}


def _names_secret(model, path: str) -> bool:
    """Does the lookup, search or ordering `path` reach a field in its model's `secret_fields`?"""
    for part in path.lstrip("-").split(LOOKUP_SEP):
        try:
            field = model._meta.get_field(part)
        except FieldDoesNotExist:
            return False  # a transform or a lookup ("startswith") of the field before it
        if field.name in getattr(model, "secret_fields", ()):
            return True
        if not field.is_relation or field.related_model is None:
            return False
        model = field.related_model
    return False


class _SecretsUnordered:
    """A changelist's `?o=` sorts by a column's field, never by a secret one."""

    model: type[Model]

    def get_ordering_field(self, field_name):
        order_field = super().get_ordering_field(field_name)
        if isinstance(order_field, str) and _names_secret(self.model, order_field):
            return None
        return order_field


@cache
def _secrets_unordered(changelist: type[ChangeList]) -> type[ChangeList]:
    return type(changelist.__name__, (_SecretsUnordered, changelist), {})


class SecretsUnqueryable:
    """No changelist filters, searches or sorts on a field in the model's `secret_fields`, which
    "seed starts with 3f" would leak a character at a time. users.admin_site mixes this into
    every ModelAdmin; a refused filter is a 400 (DisallowedModelAdminLookup)."""

    model: type[Model]

    def lookup_allowed(self, lookup, value, request=None):
        if _names_secret(self.model, lookup):
            return False
        return super().lookup_allowed(lookup, value, request)

    def get_search_fields(self, request):
        fields = super().get_search_fields(request)
        return [field for field in fields if not _names_secret(self.model, field.lstrip("^=@"))]

    def get_list_filter(self, request):
        filters = super().get_list_filter(request)
        return [item for item in filters if not (isinstance(item, str) and _names_secret(self.model, item))]

    def get_ordering(self, request):
        ordering = super().get_ordering(request) or ()
        return [item for item in ordering if not (isinstance(item, str) and _names_secret(self.model, item))]

    def get_changelist(self, request, **kwargs):
        return _secrets_unordered(super().get_changelist(request, **kwargs))
