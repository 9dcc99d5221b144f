from django.apps import AppConfig

from seckill_site.metrics import scrape_source_add


class SeckillConfig(AppConfig):
    name = "seckill"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from seckill.metrics import reservation_figures  # here: it imports the models, loaded only now

        scrape_source_add("redis", reservation_figures)
