from django.apps import AppConfig
from django.contrib.auth.signals import user_logged_in
from django.db.models.signals import pre_delete
from django.utils.translation import gettext_lazy as _


class UsersConfig(AppConfig):
    name = "users"
    verbose_name = _("Users")
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from seckill_site.metrics import scrape_source_add
        from seckill_site.ratelimit import use_shop_clock  # here: it reaches the cache, set up only now
        from users import metrics, signals  # here: they import the models, loaded only now

        # Every limit (logins here, the gate, the API) counts on Redis's clock, not the node's.
        use_shop_clock()
        user_logged_in.connect(signals.session_after_login, dispatch_uid="users.session_after_login")
        pre_delete.connect(
            signals.revoke_before_delete, sender=self.get_model("User"), dispatch_uid="users.revoke_before_delete"
        )
        scrape_source_add("sms", metrics.sms_figures)
