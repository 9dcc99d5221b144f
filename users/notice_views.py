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

NOTICES_URL = "/user/notifications"


@require_http_methods(["GET", "POST"])
@login_required
def notice_settings(request: HttpRequest) -> HttpResponse:
    user = signed_in(request)
    if request.method == "POST":
        form = NoticeSettingsForm(request.POST)
        if form.is_valid():  # only booleans: any body is valid, a missing box is off
            notices.notice_settings_save(user=user, **form.cleaned_data)
            messages.success(request, _("Notification settings saved."))
            return redirect(NOTICES_URL)
    chosen = notices.notice_settings_of(user=user)
    form = NoticeSettingsForm(initial={name: getattr(chosen, name) for name in NoticeSettingsForm.base_fields})
    return render(request, "users/notifications.html", {"form": form, "mobile": user.mobile})
