from django.apps import AppConfig


class GoodsConfig(AppConfig):
    name = "goods"
    default_auto_field = "django.db.models.BigAutoField"
