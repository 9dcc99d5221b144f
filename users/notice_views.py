"""The shopper's notification settings page: which text messages they want (users.notices)."""

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.utils.translation import gettext as _
from django.views.decorators.http import require_http_methods

from users import notices
from users.forms import NoticeSettingsForm
from users.http import signed_in
from users.services import user_language_set

NOTICES_URL = "/user/notifications"


@require_http_methods(["GET", "POST"])
@login_required
def notice_settings(request: HttpRequest) -> HttpResponse:
    user = signed_in(request)
    if request.method == "POST":
        form = NoticeSettingsForm(request.POST)
        if form.is_valid():  # a missing box is off; a language, if sent, must be one of the shop's
            language = form.cleaned_data.pop("language")
            if language:
                user_language_set(user=user, language=language)
            notices.notice_settings_save(user=user, **form.cleaned_data)
            messages.success(request, _("Notification settings saved."))
            return redirect(NOTICES_URL)
        return render(request, "users/notifications.html", {"form": form, "mobile": user.mobile}, status=400)
    chosen = notices.notice_settings_of(user=user)
    initial = {name: getattr(chosen, name) for name in NoticeSettingsForm.base_fields if name != "language"}
    form = NoticeSettingsForm(initial={**initial, "language": notices.notice_language(user)})
    return render(request, "users/notifications.html", {"form": form, "mobile": user.mobile})
