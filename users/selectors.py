"""Reads on users."""

from typing import Any

from users.models import User


def user_public_data(user: User) -> dict[str, Any]:
    """The user as shown to clients (seed 000 `user`), never with password fields."""
    return {
        "id": user.pk,
        "mobile": user.mobile,
        "nickname": user.nickname,
        "avatar": user.avatar.url if user.avatar else None,
        "registerDate": user.date_joined.isoformat(),
        "lastLoginDate": user.last_login.isoformat() if user.last_login else None,
        "loginCount": user.login_count,
    }
