"""Who the visitor is, as every page's nav shows it (static/js/nav.js): the pages are shared, so
this comes as data, from /user/me or, on the item page, with the shopper's state there."""

from typing import Any

from django.contrib import messages
from django.http import HttpRequest
from django.middleware.csrf import get_token


def nav_data(request: HttpRequest) -> dict[str, Any] | None:
    """The nav's answer: None for a visitor with nothing to show; {"nickname": None, "isStaff":
    False, "messages": [...]} for one with messages left; for a logged-in user their nickname,
    isStaff, csrfToken and any messages. Reading the messages marks them shown."""
    # request.user, not the session's id: a deactivated or stale session is logged out.
    # The pages are cached for everyone, so they cannot show a message left for this visitor
    # (the welcome after registering): they come with this answer instead. Only read when
    # there are some, so the storage is not made for every page.
    notes = _pending_messages(request)
    if not request.user.is_authenticated:
        return None if not notes else {"nickname": None, "isStaff": False, "messages": notes}
    # The CSRF token for the log-out form nav.js draws: in production the CSRF cookie is
    # HttpOnly, so no script reads it (another origin cannot read this answer).
    data: dict[str, Any] = {
        "nickname": request.user.nickname or request.user.mobile,
        "isStaff": request.user.is_staff,
        "csrfToken": get_token(request),
    }
    if notes:
        data["messages"] = notes
    return data


def _pending_messages(request: HttpRequest) -> list[dict]:
    if "_messages" not in request.session and "messages" not in request.COOKIES:
        return []
    return [{"level": message.tags, "text": str(message)} for message in messages.get_messages(request)]
