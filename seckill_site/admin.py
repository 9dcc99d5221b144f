"""Admin helpers every app shares: times, money, yes and no, and secret fields kept unqueryable."""

from functools import cache

from django.contrib.admin import SimpleListFilter
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


def lookup_resolve(model: type[Model], path: str) -> tuple[str, bool] | None:
    """The lookup `path` as the ORM reads it, with every `pk` named as the field it stands for,
    and whether it reaches a field in a model's `secret_fields`; None when a part is nothing the
    ORM accounts for (no field, no transform, or a lookup that is not the last part).

    Fields come before lookups, as in the ORM: after a relation (a `pk` that is one included)
    the next part is a field of the related model if it has one, else a lookup or transform of
    the relation. After a plain field, only its transforms and, last, a lookup may follow.
    """
    names: list[str] = []
    reaches_secret = False
    field = None
    parts = path.split(LOOKUP_SEP)
    for index, part in enumerate(parts):
        if field is None or (field.is_relation and field.related_model is not None):
            found = _field_of(model, part)
            if found is not None:
                names.append(found.name)
                reaches_secret |= found.name in getattr(model, "secret_fields", ())
                field = found
                if found.is_relation and found.related_model is not None:
                    model = found.related_model
                continue
            if field is None:
                return None
        if field.get_transform(part) is not None:
            names.append(part)
        elif field.get_lookup(part) is not None and index == len(parts) - 1:
            names.append(part)
        else:
            return None
    return LOOKUP_SEP.join(names), reaches_secret


def _field_of(model: type[Model], name: str):
    if name == "pk":
        return model._meta.pk
    try:
        return model._meta.get_field(name)
    except FieldDoesNotExist:
        return None


def _names_secret(model: type[Model], path: str) -> bool:
    """Does the search or ordering `path` reach a secret field, or a part nothing accounts for?"""
    resolved = lookup_resolve(model, path.lstrip("-"))
    return resolved is None or resolved[1]


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
    "hash starts with 3f" would leak a character at a time, nor on a path nothing accounts for.
    users.admin_site mixes this into every ModelAdmin; a refused filter is a 400
    (DisallowedModelAdminLookup)."""

    model: type[Model]

    def lookup_allowed(self, lookup, value, request=None):
        # Django's own check stops at a `pk` (FieldDoesNotExist) while the ORM follows it: it
        # is given the path the ORM will follow, so its rule that a filter crossing relations
        # must be one of list_filter sees every relation crossed.
        resolved = lookup_resolve(self.model, lookup)
        if resolved is None:
            return lookup in self._filter_parameters(request)
        if resolved[1]:
            return False
        return super().lookup_allowed(resolved[0], value, request)

    def _filter_parameters(self, request) -> set[str]:
        """The parameters of this admin's own list filters (SimpleListFilter), which are no path:
        the filter's code reads them."""
        return {
            item.parameter_name
            for item in self.get_list_filter(request)
            if isinstance(item, type) and issubclass(item, SimpleListFilter) and item.parameter_name
        }

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
