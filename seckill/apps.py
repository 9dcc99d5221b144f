from django.apps import AppConfig

from seckill_site.metrics import fast_counts, scrape_source_add


class SeckillConfig(AppConfig):
    name = "seckill"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from seckill import metrics  # here: it imports the models, loaded only now

        scrape_source_add("redis", metrics.redis_figures)
        # The fast path's refusals (seckill.fastpath) counted with the gate's answers.
        if metrics.attempts_folded not in fast_counts.fold_listeners:
            fast_counts.fold_listeners.append(metrics.attempts_folded)
