"""Text messages the shop sends a shopper about an event (a sale about to open, a draw won, an
order about to expire), each at most once per event and recipient.

A notice's `key` names the event and recipient ("sale-reminder:<sale>:<user>"), unique in
PostgreSQL: a sweep that runs twice, or a task delivered again, finds the row and goes on
from its state. Its life:

| from                                   | to      | by                                               |
| -------------------------------------- | ------- | ------------------------------------------------ |
| (none)                                 | pending | notice_send records it                           |
| pending, or sending claimed > lease ago | sending | the claim: one conditional UPDATE, tries + 1     |
| sending (this claim)                   | skipped | the shopper turned the kind off, or is inactive  |
| sending (this claim)                   | failed  | a limit refused it, or the provider failed       |
|                                        |         | NOTICE_SEND_TRIES times                          |
| sending (this claim)                   | pending | the provider failed: the next sweep tries again  |
| sending (this claim)                   | sent    | the provider took it                             |

Every transition after the claim names the claim's time, so a sender whose claim lapsed and
was taken over changes nothing. A notice goes through the text-message limits codes go
through: the number's daily cap and the shop's hourly cap (users.verification); a refusal is
final, counted in `seckill_sms_messages_total` and `seckill_notices_total`, never retried.

The crash window: a sender can die after the provider took the message and before it marked
the notice sent. After NOTICE_CLAIM_SECONDS the next sweep claims it again and sends it again
with the same key, which the backend passes to the provider as the message's client reference
(users.sms): the provider drops a reference it has seen, so the shopper is texted once. A
provider without such references would text twice in that window, never more than
NOTICE_SEND_TRIES times.
"""

from datetime import timedelta

from django.conf import settings
from django.db.models import F, Q
from django.utils import timezone
from prometheus_client import Counter

from users.models import Notice, NoticeKind, NoticeSettings, NoticeStatus, User
from users.sms import SMS_MESSAGES, SmsError, sms_backend
from users.verification.services import sms_number_day_take, sms_shop_hour_take

# Every notice tried, by kind and result: sent, skipped (turned off), number_day and shop_hour
# (refused by a limit), provider_failed (tries left: again later), failed (tries spent).
NOTICES = Counter("seckill_notices_total", "Notices to shoppers, by kind and result", ["kind", "result"])

DONE = (NoticeStatus.SENT, NoticeStatus.SKIPPED, NoticeStatus.FAILED)
BUSY = "busy"  # another sender holds a fresh claim on it


def notice_language(user: User) -> str:
    """The language to write `user`'s messages in: theirs (users.services.user_language_remember),
    else the shop's."""
    return user.language or settings.LANGUAGE_CODE


def notice_wanted(*, user: User, kind: str) -> bool:
    """Does the shopper want messages of `kind`? Yes unless they turned it off."""
    chosen = NoticeSettings.objects.filter(user_id=user.pk).first()
    return chosen is None or chosen.wants(kind)


def notice_send(*, user: User, kind: str, key: str, text: str) -> str:
    """Record the notice `key` (once: a repeat finds it) and send it unless it is done or another
    sender holds it. Returns its status after this call, or BUSY. `text` is used when the notice
    is recorded here; a repeat sends the text first recorded."""
    NoticeKind(kind)  # an unknown kind is a programming error, not a message
    notice, _created = Notice.objects.get_or_create(key=key, defaults={"user": user, "kind": kind, "text": text})
    if notice.status in DONE:
        return notice.status
    return notice_deliver(notice=notice)


def _claim(notice: Notice) -> bool:
    claimed_at = timezone.now()
    lapsed = claimed_at - timedelta(seconds=settings.NOTICE_CLAIM_SECONDS)
    taken = (
        Notice.objects.filter(pk=notice.pk)
        .filter(Q(status=NoticeStatus.PENDING) | Q(status=NoticeStatus.SENDING, claimed_at__lt=lapsed))
        .update(status=NoticeStatus.SENDING, claimed_at=claimed_at, tries=F("tries") + 1)
    )
    if taken:
        notice.refresh_from_db(fields=["status", "claimed_at", "tries"])
    return taken == 1


def _finish(notice: Notice, status: str, reason: str = "", result: str | None = None) -> str:
    """Move the notice from this sender's claim to `status`; count `result` (default: the status)."""
    changes: dict = {"status": status, "reason": reason}
    if status == NoticeStatus.SENT:
        changes["sent_at"] = timezone.now()
    moved = Notice.objects.filter(pk=notice.pk, status=NoticeStatus.SENDING, claimed_at=notice.claimed_at).update(
        **changes
    )
    if moved:
        NOTICES.labels(notice.kind, result or status).inc()
    return status


def notice_deliver(*, notice: Notice) -> str:
    """Claim and send a recorded notice (see the module's table); its status, or BUSY."""
    if not _claim(notice):
        return BUSY
    user = User.objects.get(pk=notice.user_id)
    if not user.is_active:
        return _finish(notice, NoticeStatus.SKIPPED, "inactive")
    if not notice_wanted(user=user, kind=notice.kind):
        return _finish(notice, NoticeStatus.SKIPPED, "turned off")
    # The number's day first, as for codes: a message the shop's hour refuses still counted there.
    refusal = "number_day" if sms_number_day_take(mobile=user.mobile) else None
    refusal = refusal or ("shop_hour" if sms_shop_hour_take() else None)
    if refusal:
        SMS_MESSAGES.labels(refusal).inc()
        return _finish(notice, NoticeStatus.FAILED, refusal, result=refusal)
    try:
        sms_backend().send(mobile=user.mobile, text=notice.text, key=notice.key)
    except SmsError as error:
        if notice.tries >= settings.NOTICE_SEND_TRIES:
            return _finish(notice, NoticeStatus.FAILED, f"provider: {error}"[:64], result="failed")
        return _finish(notice, NoticeStatus.PENDING, f"provider: {error}"[:64], result="provider_failed")
    SMS_MESSAGES.labels("sent").inc()
    return _finish(notice, NoticeStatus.SENT)


def notice_settings_of(*, user: User) -> NoticeSettings:
    """The shopper's settings, unsaved defaults when they never chose."""
    return NoticeSettings.objects.filter(user_id=user.pk).first() or NoticeSettings(user=user)


def notice_settings_save(*, user: User, sale_reminders: bool, draw_results: bool, payment_reminders: bool) -> None:
    NoticeSettings.objects.update_or_create(
        user=user,
        defaults={
            "sale_reminders": sale_reminders,
            "draw_results": draw_results,
            "payment_reminders": payment_reminders,
        },
    )
