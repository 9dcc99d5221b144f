"""Mobile numbers verified by text message: six-digit codes for registration and for
logging in by code.

A code lives in Redis for 5 minutes, is used once, and allows 5 checks before it is
dropped, so guessing one of a million codes is hopeless. Sending is limited per number (one
message a minute, 5 a day) and per client IP (SMS_SENDS_PER_IP_PER_HOUR): a text message
costs the shop money and a stranger's phone some peace. Registrations are counted per
client IP and hour for the admin (users.admin), where a farm of new accounts shows.
"""

import secrets
import time
from dataclasses import dataclass
from datetime import UTC, datetime

from django import forms
from django.conf import settings
from django.contrib.auth import login
from django.core.validators import RegexValidator
from django.db.models import F
from django.http import HttpRequest
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy

from seckill_site.redis import client, keys, script
from users.fields import MobileField
from users.models import User
from users.services import LoginResult
from users.sms import sms_backend

PURPOSES = ("register", "login")


@dataclass(frozen=True)
class SmsSendResult:
    sent: bool
    wait: int  # seconds until the number may ask again (the page's resend countdown)
    error: str | None = None


def sms_code_send(*, mobile: str, purpose: str, ip: str) -> SmsSendResult:
    """Send a new code to `mobile` for `purpose` ("register" or "login"); it replaces any
    earlier one. The caller validated the number's format."""
    if purpose not in PURPOSES:
        raise ValueError(f"unknown purpose {purpose!r}")
    redis = client()
    by_ip = redis.incr(keys.sms_ip(ip))
    if by_ip == 1:
        redis.expire(keys.sms_ip(ip), keys.SMS_IP_WINDOW)
    if by_ip > settings.SMS_SENDS_PER_IP_PER_HOUR:
        wait = max(1, redis.ttl(keys.sms_ip(ip)))
        return SmsSendResult(False, wait, _("Too many text messages from your network, try again later."))
    registered = User.objects.filter(mobile=mobile).exists()
    if purpose == "register" and registered:
        return SmsSendResult(False, 0, _("This mobile number is already registered."))
    refusal, wait = script("sms_send")(
        keys=[keys.sms_resend(mobile), keys.sms_day(mobile)],
        args=[keys.SMS_RESEND_SECONDS, keys.SMS_DAY_SECONDS, keys.SMS_SENDS_PER_DAY],
    )
    if refusal == 1:
        return SmsSendResult(False, max(1, wait), _("A code was sent a moment ago: wait before asking again."))
    if refusal == 2:
        return SmsSendResult(False, max(1, wait), _("Too many codes for this number today, try again tomorrow."))
    if purpose == "login" and not registered:
        # Answer as if sent: whether a number has an account is nobody's business here.
        return SmsSendResult(True, wait)
    code = f"{secrets.randbelow(10**6):06d}"
    with redis.pipeline(transaction=False) as pipe:
        pipe.delete(keys.sms_code(mobile, purpose))
        pipe.hset(keys.sms_code(mobile, purpose), mapping={"code": code, "checks": 0})
        pipe.expire(keys.sms_code(mobile, purpose), keys.SMS_CODE_TTL)
        pipe.execute()
    text = _("Your Seckill code is %(code)s. It is valid for 5 minutes; never share it.") % {"code": code}
    sms_backend().send(mobile=mobile, text=text)
    return SmsSendResult(True, wait)


def sms_code_check(*, mobile: str, purpose: str, code: str) -> bool:
    """Is `code` the one sent to `mobile` for `purpose`? A right code is used up; so is a
    code after SMS_CODE_MAX_CHECKS wrong tries."""
    answer = script("sms_check")(keys=[keys.sms_code(mobile, purpose)], args=[code, keys.SMS_CODE_MAX_CHECKS])
    return answer == 1


def user_login_by_code(*, request: HttpRequest, mobile: str) -> LoginResult:
    """Start a session for `mobile`, whose code the caller has checked (CodeLoginForm)."""
    user = User.objects.filter(mobile=mobile, is_active=True).first()
    if user is None:
        return LoginResult(user=None, error=_("Wrong mobile number or code."))
    login(request, user, backend="users.backends.MobileBackend")
    User.objects.filter(pk=user.pk).update(login_count=F("login_count") + 1)
    user.refresh_from_db(fields=["login_count"])
    return LoginResult(user=user)


def registration_record(*, ip: str) -> None:
    """Count one new account for this client IP in the current hour."""
    key = keys.registrations(int(time.time() // 3600))
    with client().pipeline(transaction=False) as pipe:
        pipe.zincrby(key, 1, ip)
        pipe.expire(key, keys.REGISTRATIONS_TTL)
        pipe.execute()


def registrations_by_ip(*, hours: int = 24, top: int = 20) -> list[dict]:
    """The busiest client IPs of each of the last `hours` hours, newest hour first."""
    now = int(time.time() // 3600)
    rows = []
    for hour in range(now, now - hours, -1):
        for ip, count in client().zrevrange(keys.registrations(hour), 0, top - 1, withscores=True):
            start = datetime.fromtimestamp(hour * 3600, tz=UTC)
            rows.append({"hour_start": start, "ip": ip.decode(), "accounts": int(count)})
    return rows


# --- forms -------------------------------------------------------------------------------------


class SmsCodeForm(forms.Form):
    """A form with a `mobile` field and the code texted to it for `sms_purpose`. The code is
    checked last, only once everything else is valid, so a typo elsewhere does not use up
    one of the code's few checks."""

    sms_purpose = "register"
    code = forms.CharField(
        label=gettext_lazy("Code from the text message"),
        min_length=6,
        max_length=6,
        validators=[RegexValidator(r"^[0-9]{6}$", gettext_lazy("Enter the 6 digits of the code."))],
        widget=forms.TextInput(attrs={"inputmode": "numeric", "autocomplete": "one-time-code"}),
    )

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.fields["code"] = self.fields.pop("code")  # after the form's own fields

    def _post_clean(self) -> None:
        super()._post_clean()
        if self.errors:
            return
        if not sms_code_check(
            mobile=self.cleaned_data["mobile"], purpose=self.sms_purpose, code=self.cleaned_data["code"]
        ):
            self.add_error("code", _("Wrong or expired code: ask for a new one."))


class CodeLoginForm(SmsCodeForm):
    sms_purpose = "login"
    mobile = MobileField()


class SmsSendForm(forms.Form):
    mobile = MobileField()
    purpose = forms.ChoiceField(choices=[(purpose, purpose) for purpose in PURPOSES])


def sms_demo_hint(request: HttpRequest) -> dict:
    """Context processor: where a developer finds the codes, for the pages that ask for one."""
    backend = settings.SMS_BACKEND.rsplit(".", 1)[-1]
    if backend == "ConsoleSmsBackend":
        return {"sms_hint": _("Demo: the code is printed in the server's log.")}
    if backend == "FileSmsBackend":
        return {"sms_hint": _("Demo: the code is written to %(path)s.") % {"path": settings.SMS_FILE_PATH}}
    return {}
