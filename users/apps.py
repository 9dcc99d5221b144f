from django.apps import AppConfig


class UsersConfig(AppConfig):
    name = "users"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        # Every limit (logins here, the gate, the API) counts on Redis's clock, not the node's.
        from seckill_site.ratelimit import use_shop_clock

        use_shop_clock()
