"""Merchant admin of the catalogue: a merchant sees and edits only their own goods.

Written for the merchant at a 1280-pixel screen, in the merchant's language and the shop's time
zone. The goods' sales on this page are added by the sales app (sales.admin).
"""

from django.contrib import admin, messages
from django.http import Http404, HttpResponseRedirect
from django.urls import reverse
from django.utils.translation import gettext_lazy
from modeltranslation.admin import TranslationAdmin

from goods import services
from goods.models import Goods
from goods.translation import TRANSLATED
from seckill_site.admin import list_time, money
from seckill_site.translated import field_in, languages
from users.merchants import MerchantScopedAdmin


def _in_each_language(*fields: str) -> list[str]:
    return [field_in(field, code) for field in fields for code in languages()]


@admin.register(Goods)
class GoodsAdmin(MerchantScopedAdmin, TranslationAdmin):
    """The catalogue's page. The sales app registers it again with the goods' sales on it
    (sales.admin.GoodsWithSalesAdmin).

    The name, title and description are written in each language, one under the other; any
    one of each will do (Goods.clean), the other language's pages show it."""

    sale_columns: list[str] = []
    search_fields = _in_each_language("name", "title")
    delete_confirmation_template = "admin/goods/delete_confirmation.html"
    delete_selected_confirmation_template = "admin/goods/delete_selected_confirmation.html"

    def get_list_display(self, request):
        columns = ["name", "title", "price_display", "stock", *self.sale_columns, "created_display"]
        return columns + ["owner"] if request.user.is_superuser else columns

    @admin.display(description=gettext_lazy("price"), ordering="price")
    def price_display(self, obj):
        return money(obj.price)

    @admin.display(description=gettext_lazy("created"), ordering="created_at")
    def created_display(self, obj):
        return list_time(obj.created_at)

    def get_fieldsets(self, request, obj=None):
        texts = [
            (Goods._meta.get_field(field).verbose_name.capitalize(), {"fields": _in_each_language(field)})
            for field in TRANSLATED
        ]
        texts[0][1]["description"] = gettext_lazy(
            "Shoppers read each text in their language, else in the other: one language is enough."
        )
        fields = ["image", "price", "stock"]
        return [*texts, (None, {"fields": fields + ["owner"] if request.user.is_superuser else fields})]

    def formfield_for_dbfield(self, db_field, request, **kwargs):
        field = super().formfield_for_dbfield(db_field, request, **kwargs)
        if field is not None and hasattr(db_field, "translated_field"):
            field.required = False  # one language is enough: Goods.clean says which is missing
        return field

    def save_model(self, request, obj, form, change):
        if not change and not request.user.is_superuser:
            obj.owner = request.user
        try:
            services.goods_save(goods=obj)
        except Goods.DoesNotExist:
            raise Http404("no such goods") from None

    # Deleting (one, or the bulk action) goes through the service like every other write.
    def delete_model(self, request, obj):
        delete_through(self, request, services.goods_delete, goods=obj)

    def delete_queryset(self, request, queryset):
        for goods in queryset.order_by("pk"):
            delete_through(self, request, services.goods_delete, goods=goods)

    def response_delete(self, request, obj_display, obj_id):
        return response_after_delete(self, request, obj_display, obj_id)


def delete_through(model_admin, request, service, **obj) -> None:
    """Call a delete service; a refusal (GoodsInUse: a sale with orders, or orders still being
    written) becomes an error message instead of a 500, and the success message is skipped."""
    try:
        service(**obj)
    except services.GoodsInUse as refusal:
        request._delete_refused = True
        model_admin.message_user(request, f"{next(iter(obj.values()))}: {refusal}", messages.ERROR)


def response_after_delete(model_admin, request, obj_display, obj_id):
    if getattr(request, "_delete_refused", False):
        opts = model_admin.opts
        return HttpResponseRedirect(reverse(f"admin:{opts.app_label}_{opts.model_name}_changelist"))
    return admin.ModelAdmin.response_delete(model_admin, request, obj_display, obj_id)
