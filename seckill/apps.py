from django.apps import AppConfig


class SeckillConfig(AppConfig):
    name = "seckill"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from seckill.metrics import reservation_figures
        from seckill_site.metrics import scrape_source_add

        scrape_source_add("redis", reservation_figures)
