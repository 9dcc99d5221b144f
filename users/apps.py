from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


def _session_after_login(sender, request, user, **kwargs) -> None:
    """Re-key the session after login: its key now names the user and it carries their auth
    epoch (users.sessions). Django's login() cycles the key before the user is set."""
    from users.sessions import SessionStore

    session = getattr(request, "session", None)
    if isinstance(session, SessionStore):
        session.cycle_key()


def _revoke_before_delete(sender, instance, **kwargs) -> None:
    """However a user row goes (the admin's delete, a bulk delete, a shell), their sessions and
    tokens end with it (users.services.user_deleted_revoke)."""
    from users.services import user_deleted_revoke

    user_deleted_revoke(user_id=instance.pk)


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

        from django.db.models.signals import pre_delete

        from users.models import User

        pre_delete.connect(_revoke_before_delete, sender=User, dispatch_uid="users.revoke_before_delete")
