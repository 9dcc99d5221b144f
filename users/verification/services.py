"""Mobile numbers verified by text message: six-digit codes for registration and for
logging in by code.

A code lives in Redis for 5 minutes, is used once, and allows 5 checks before it is
dropped, so guessing one of a million codes is hopeless. A text message costs the shop money
and a stranger's phone some peace, so sending is limited, and so that no stranger can spend a
number's budget and lock its owner out, every per-number limit is per requester (the client
IP, an IPv6 /64: seckill_site.http.client_bucket):

- a number and one requester: one message a minute, 5 a day (sms_send.lua);
- a number, all requesters: SMS_SENDS_PER_NUMBER_PER_DAY, far above a person's needs; a
  requester that once entered a code sent to the number is exempt (it receives its messages);
- one requester, all numbers: SMS_SENDS_PER_IP_PER_HOUR;
- the whole shop: SMS_SENDS_PER_HOUR (SMS pumping: a flood of paid messages to numbers an
  attacker earns from), counted in `seckill_sms_messages_total{result}` with an alert. Notices
  (users.notices) count in the same hour but stop SMS_CODE_RESERVE_PER_HOUR short of the cap,
  so a reminder sweep never locks shoppers out of sign-up and login codes.

A send answers the same whether or not the number has an account, and the message says what
happened: a code, or "no account here: register" / "you have an account: log in". Nobody
learns from the answer who is registered. Registrations are counted per client IP and hour
for the admin (users.admin), where a farm of new accounts shows.
"""

import secrets
import time
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import cast

from django.conf import settings
from django.contrib.auth import login
from django.db.models import F
from django.http import HttpRequest
from django.utils.translation import gettext as _
from django.views.decorators.debug import sensitive_variables

from seckill_site.redis import client, now, script, text
from users.models import User
from users.services import LoginResult, user_language_remember
from users.sms import SMS_MESSAGES, sms_backend
from users.verification import keys

PURPOSES = ("register", "login")


@dataclass(frozen=True)
class SmsSendResult:
    sent: bool
    wait: int  # seconds until the number may ask again (the page's resend countdown)
    error: str | None = None


def _sms_refused(result: str, wait: int, error: str) -> SmsSendResult:
    SMS_MESSAGES.labels(result).inc()
    return SmsSendResult(False, max(1, wait), error)


def _sms_shop_hour_take(limit: int) -> int:
    hour = int(now() // 3600)
    refused, _sent = script("sms_shop_hour_take")(
        keys=[keys.sms_shop_hour(hour)], args=[max(0, limit), keys.SMS_SHOP_HOUR_TTL]
    )
    return max(1, int((hour + 1) * 3600 - now())) if refused else 0


def sms_shop_hour_take() -> int:
    """Count one code against the shop's hourly cap (SMS_SENDS_PER_HOUR), which notices count
    in too: 0 when it may go, else the seconds until the next hour (refused, and not counted)."""
    return _sms_shop_hour_take(settings.SMS_SENDS_PER_HOUR)


def sms_notice_hour_take() -> int:
    """Count one notice against the shop's hour as sms_shop_hour_take does, but only up to the
    cap less SMS_CODE_RESERVE_PER_HOUR: however many reminders a sweep has, the hour keeps
    that many messages for sign-up and login codes. 0 when it may go, else the seconds until
    the next hour (refused: the notice waits)."""
    return _sms_shop_hour_take(sms_notice_hour_limit())


def sms_notice_hour_limit() -> int:
    """The messages of an hour notices may take: the cap less the codes' reserve."""
    return max(0, settings.SMS_SENDS_PER_HOUR - settings.SMS_CODE_RESERVE_PER_HOUR)


def sms_shop_hour_give_back() -> None:
    """Uncount one message this hour took, for one refused after it took its place."""
    script("sms_shop_hour_give_back")(keys=[keys.sms_shop_hour(int(now() // 3600))])


def sms_shop_hour_sent() -> int:
    """The messages the shop has sent this hour, codes and notices."""
    return int(client().get(keys.sms_shop_hour(int(now() // 3600))) or 0)


def sms_number_day_take(*, mobile: str) -> int:
    """Count one shop-initiated message (a notice) against the number's daily cap
    (SMS_SENDS_PER_NUMBER_PER_DAY, which its codes count in too): 0 when it may go, else the
    seconds until the number's day is over."""
    refused, wait = script("sms_number_take")(
        keys=[keys.sms_number_day(mobile)], args=[settings.SMS_SENDS_PER_NUMBER_PER_DAY, keys.SMS_DAY_SECONDS]
    )
    return max(1, int(wait)) if refused else 0


@sensitive_variables("code", "text")
def sms_code_send(*, mobile: str, purpose: str, requester: str) -> SmsSendResult:
    """Text `mobile` for `purpose` ("register" or "login"), asked for by `requester` (the
    client's limit bucket). The answer is the same whether or not the number has an account;
    the message differs: a new code (replacing any earlier one) when the purpose can go on,
    else what to do instead. The caller validated the number's format."""
    if purpose not in PURPOSES:
        raise ValueError(f"unknown purpose {purpose!r}")
    redis = client()
    by_requester = redis.incr(keys.sms_ip(requester))
    if by_requester == 1:
        redis.expire(keys.sms_ip(requester), keys.SMS_IP_WINDOW)
    if by_requester > settings.SMS_SENDS_PER_IP_PER_HOUR:
        error = _("Too many text messages from your network, try again later.")
        return _sms_refused("requester_hour", redis.ttl(keys.sms_ip(requester)), error)
    refusal, wait = script("sms_send")(
        keys=[
            keys.sms_resend(mobile, requester),
            keys.sms_day(mobile, requester),
            keys.sms_number_day(mobile),
            keys.sms_known(mobile),
        ],
        args=[
            keys.SMS_RESEND_SECONDS,
            keys.SMS_DAY_SECONDS,
            keys.SMS_SENDS_PER_DAY,
            settings.SMS_SENDS_PER_NUMBER_PER_DAY,
            requester,
        ],
    )
    if refusal == 1:
        return _sms_refused("resend_wait", wait, _("A code was sent a moment ago: wait before asking again."))
    if refusal in (2, 3):
        result = "requester_day" if refusal == 2 else "number_day"
        return _sms_refused(result, wait, _("Too many codes for this number today, try again tomorrow."))
    shop_wait = sms_shop_hour_take()
    if shop_wait:
        error = _("The shop cannot send more text messages this hour, try again later.")
        return _sms_refused("shop_hour", shop_wait, error)
    registered = User.objects.filter(mobile=mobile).exists()
    code = f"{secrets.randbelow(10**6):06d}"
    goes_on = registered if purpose == "login" else not registered
    # One pipeline either way (no code: any earlier one is dropped), so the time a send takes
    # does not tell either.
    with redis.pipeline(transaction=False) as pipe:
        pipe.delete(keys.sms_code(mobile, purpose))
        if goes_on:
            pipe.hset(keys.sms_code(mobile, purpose), mapping={"code": code, "checks": 0, "requester": requester})
            pipe.expire(keys.sms_code(mobile, purpose), keys.SMS_CODE_TTL)
        pipe.execute()
    if goes_on:
        text = _("Your Seckill code is %(code)s. It is valid for 5 minutes; never share it.") % {"code": code}
    elif purpose == "login":
        text = _("Someone asked to log in to Seckill with this number, which has no account. To make one, register.")
    else:
        text = _(
            "Someone asked to register this number at Seckill, which already has an account: "
            "log in with your password or a code instead."
        )
    sms_backend().send(mobile=mobile, text=text)
    SMS_MESSAGES.labels("sent").inc()
    return SmsSendResult(True, wait)


@sensitive_variables("code")
def sms_code_check(*, mobile: str, purpose: str, code: str) -> bool:
    """Is `code` the one sent to `mobile` for `purpose`? A right code is used up; so is a
    code after SMS_CODE_MAX_CHECKS wrong tries. The requester who asked for a right code
    receives the number's messages: it becomes known to the number (sms_send.lua)."""
    answer = script("sms_check")(keys=[keys.sms_code(mobile, purpose)], args=[code, keys.SMS_CODE_MAX_CHECKS])
    if answer[0] != 1:
        return False
    requester = answer[1].decode() if isinstance(answer[1], bytes) else str(answer[1])
    if requester:
        with client().pipeline(transaction=False) as pipe:
            pipe.sadd(keys.sms_known(mobile), requester)
            pipe.expire(keys.sms_known(mobile), keys.SMS_KNOWN_TTL)
            pipe.execute()
    return True


def user_login_by_code(*, request: HttpRequest, mobile: str) -> LoginResult:
    """Start a session for `mobile`, whose code the caller has checked (CodeLoginForm)."""
    user = User.objects.filter(mobile=mobile, is_active=True).first()
    if user is None:
        return LoginResult(user=None, error=_("Wrong mobile number or code."))
    login(request, user, backend="users.backends.MobileBackend")
    User.objects.filter(pk=user.pk).update(login_count=F("login_count") + 1)
    user_language_remember(user=user)
    user.refresh_from_db(fields=["login_count", "language"])
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
        ranked = cast(
            list[tuple[bytes, float]], client().zrevrange(keys.registrations(hour), 0, top - 1, withscores=True)
        )
        for ip, count in ranked:
            start = datetime.fromtimestamp(hour * 3600, tz=UTC)
            rows.append({"hour_start": start, "ip": text(ip), "accounts": int(count)})
    return rows


# --- forms -------------------------------------------------------------------------------------
