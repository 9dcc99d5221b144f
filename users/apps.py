from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


def _session_after_login(sender, request, user, **kwargs) -> None:
    """Re-key the session after login: its key now names the user and it carries their auth
    epoch (users.sessions). Django's login() cycles the key before the user is set."""
    from users.sessions import SessionStore

    session = getattr(request, "session", None)
    if isinstance(session, SessionStore):
        session.cycle_key()


class UsersConfig(AppConfig):
    name = "users"
    verbose_name = _("Users")
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        # Every limit (logins here, the gate, the API) counts on Redis's clock, not the node's.
        from seckill_site.ratelimit import use_shop_clock

        use_shop_clock()

        from django.contrib.auth.signals import user_logged_in

        user_logged_in.connect(_session_after_login, dispatch_uid="users.session_after_login")
