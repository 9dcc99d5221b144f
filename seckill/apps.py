from django.apps import AppConfig


class SeckillConfig(AppConfig):
    name = "seckill"
    default_auto_field = "django.db.models.BigAutoField"
