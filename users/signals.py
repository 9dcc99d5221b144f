"""Signal handlers of the users app (connected in UsersConfig.ready): infrastructure that must
run however a login or a deletion happens, not domain flow."""

from users.revocation import user_deleted_revoke
from users.sessions import SessionStore


def session_after_login(sender, request, user, **kwargs) -> None:
    """Re-key the session after login: its key now names the user and it carries their auth
    epoch (users.sessions). Django's login() cycles the key before the user is set."""
    session = getattr(request, "session", None)
    if isinstance(session, SessionStore):
        session.cycle_key()


def revoke_before_delete(sender, instance, **kwargs) -> None:
    """However a user row goes (the admin's delete, a bulk delete, a shell), their sessions and
    tokens end with it (users.revocation.user_deleted_revoke)."""
    user_deleted_revoke(user_id=instance.pk)
