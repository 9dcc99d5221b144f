"""Text messages the shop sends a shopper about an event (a sale about to open, a draw won, an
order about to expire, an order shipped, a refund request answered, the merchant's answer to
a message), each at most once per event and recipient, and only while worth sending.

A notice's `key` names the event and recipient ("sale-reminder:<sale>:<user>"), unique in
PostgreSQL: a sweep that runs twice, or a task delivered again, finds the row and goes on
from its state. `worth_until` is when it stops being worth sending (a reminder once its sale
opens). Its life:

| from                                   | to      | by                                               |
| -------------------------------------- | ------- | ------------------------------------------------ |
| (none)                                 | pending | notice_send records it                           |
| pending, or sending claimed > lease ago | sending | the claim: one conditional UPDATE, tries + 1     |
| sending (this claim)                   | skipped | the shopper turned the kind off, or is inactive, |
|                                        |         | or its worth_until has passed ("too late")       |
| sending (this claim)                   | pending | the hour's budget for notices is spent: it waits |
|                                        |         | (tries - 1; the sweeps try it again)             |
| sending (this claim)                   | failed  | the number's daily cap refused it, or the        |
|                                        |         | provider failed NOTICE_SEND_TRIES times          |
| sending (this claim)                   | pending | the provider failed: the next sweep tries again  |
| sending (this claim)                   | sent    | the provider took it                             |
| pending, or sending claimed > lease ago | skipped | notices_expire, once worth_until has passed      |

Every transition after the claim names the claim's time, so a sender whose claim lapsed and
was taken over changes nothing. A notice goes through the text-message limits codes go
through (users.verification): the number's daily cap, final, and the shop's hourly cap, of
which notices may use all but SMS_CODE_RESERVE_PER_HOUR, kept for sign-up and login codes. A
notice that finds the notices' part spent waits, pending, and is sent by a later sweep within
its worth: the sweeps stop at the first such answer (WAITING) and try again next time.
Counted in `seckill_sms_messages_total` and `seckill_notices_total`.

The crash window: a sender can die after the provider took the message and before it marked
the notice sent. After NOTICE_CLAIM_SECONDS the next sweep claims it again and sends it again
with the same key, which the backend passes to the provider as the message's client reference
(users.sms): the provider drops a reference it has seen, so the shopper is texted once. A
provider without such references would text twice in that window, never more than
NOTICE_SEND_TRIES times.
"""

from datetime import datetime, timedelta

from django.conf import settings
from django.db.models import F, Q
from django.utils import timezone
from prometheus_client import Counter

from users.models import Notice, NoticeKind, NoticeSettings, NoticeStatus, User
from users.sms import SMS_MESSAGES, SmsError, sms_backend
from users.verification.services import sms_notice_hour_take, sms_number_day_take, sms_shop_hour_give_back

# Every notice tried, by kind and result: sent, skipped (turned off or inactive), too_late,
# waiting (the hour's budget for notices is spent: again later), number_day (refused by the
# number's cap), provider_failed (tries left: again later), failed (tries spent).
NOTICES = Counter("seckill_notices_total", "Notices to shoppers, by kind and result", ["kind", "result"])

DONE = (NoticeStatus.SENT, NoticeStatus.SKIPPED, NoticeStatus.FAILED)
BUSY = "busy"  # another sender holds a fresh claim on it
WAITING = "waiting"  # pending until the shop's hour has room for notices again
TOO_LATE = "too late"  # the reason of a notice skipped once worth_until had passed


def notice_language(user: User) -> str:
    """The language to write `user`'s messages in: theirs (users.services.user_language_remember),
    else the shop's."""
    return user.language or settings.LANGUAGE_CODE


def notice_wanted(*, user: User, kind: str) -> bool:
    """Does the shopper want messages of `kind`? Yes unless they turned it off."""
    chosen = NoticeSettings.objects.filter(user_id=user.pk).first()
    return chosen is None or chosen.wants(kind)


def notice_send(*, user: User, kind: str, key: str, text: str, worth_until: datetime | None = None) -> str:
    """Record the notice `key` (once: a repeat finds it) and send it unless it is done or another
    sender holds it. Returns its status after this call, BUSY, or WAITING (it stays pending: the
    caller should stop its batch and try again later). `text` and `worth_until` (when it stops
    being worth sending; None, never) are used when the notice is recorded here."""
    NoticeKind(kind)  # an unknown kind is a programming error, not a message
    notice, _created = Notice.objects.get_or_create(
        key=key, defaults={"user": user, "kind": kind, "text": text, "worth_until": worth_until}
    )
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


def _finish(notice: Notice, status: str, reason: str = "", result: str | None = None, *, waits: bool = False) -> str:
    """Move the notice from this sender's claim to `status`; count `result` (default: the status).
    A notice that `waits` gets its try back: waiting for the budget is no provider failure."""
    changes: dict = {"status": status, "reason": reason}
    if status == NoticeStatus.SENT:
        changes["sent_at"] = timezone.now()
    if waits:
        changes["tries"] = F("tries") - 1
    moved = Notice.objects.filter(pk=notice.pk, status=NoticeStatus.SENDING, claimed_at=notice.claimed_at).update(
        **changes
    )
    if moved:
        NOTICES.labels(notice.kind, result or status).inc()
    return WAITING if waits else status


def notice_deliver(*, notice: Notice) -> str:
    """Claim and send a recorded notice (see the module's table); its status, BUSY or WAITING."""
    if not _claim(notice):
        return BUSY
    user = User.objects.get(pk=notice.user_id)
    if not user.is_active:
        return _finish(notice, NoticeStatus.SKIPPED, "inactive")
    if not notice_wanted(user=user, kind=notice.kind):
        return _finish(notice, NoticeStatus.SKIPPED, "turned off")
    if notice.worth_until is not None and timezone.now() >= notice.worth_until:
        return _finish(notice, NoticeStatus.SKIPPED, TOO_LATE, result="too_late")
    # The shop's hour first: a notice it refuses waits, and must not spend the number's day.
    if sms_notice_hour_take():
        return _finish(notice, NoticeStatus.PENDING, "shop_hour", result="waiting", waits=True)
    if sms_number_day_take(mobile=user.mobile):
        sms_shop_hour_give_back()  # not sent: the hour's place goes back
        SMS_MESSAGES.labels("number_day").inc()
        return _finish(notice, NoticeStatus.FAILED, "number_day", result="number_day")
    try:
        sms_backend().send(mobile=user.mobile, text=notice.text, key=notice.key)
    except SmsError as error:
        if notice.tries >= settings.NOTICE_SEND_TRIES:
            return _finish(notice, NoticeStatus.FAILED, f"provider: {error}"[:64], result="failed")
        return _finish(notice, NoticeStatus.PENDING, f"provider: {error}"[:64], result="provider_failed")
    SMS_MESSAGES.labels("sent").inc()
    return _finish(notice, NoticeStatus.SENT)


def notices_expire() -> int:
    """Beat's sweep: skip, as TOO_LATE, every notice no sender holds whose worth_until has passed
    (the sweeps no longer look at them); how many. Conditional UPDATEs, so a sender that claims
    one at the same moment either wins it (and skips it itself) or finds it finished."""
    now = timezone.now()
    lapsed = now - timedelta(seconds=settings.NOTICE_CLAIM_SECONDS)
    expired = Notice.objects.filter(worth_until__lte=now).filter(
        Q(status=NoticeStatus.PENDING) | Q(status=NoticeStatus.SENDING, claimed_at__lt=lapsed)
    )
    moved = 0
    for kind in NoticeKind.values:  # one UPDATE per kind: its count is the metric's, exactly
        count = expired.filter(kind=kind).update(status=NoticeStatus.SKIPPED, reason=TOO_LATE)
        if count:
            NOTICES.labels(kind, "too_late").inc(count)
        moved += count
    return moved


def notice_settings_of(*, user: User) -> NoticeSettings:
    """The shopper's settings, unsaved defaults when they never chose."""
    return NoticeSettings.objects.filter(user_id=user.pk).first() or NoticeSettings(user=user)


def notice_settings_save(
    *,
    user: User,
    sale_reminders: bool,
    draw_results: bool,
    payment_reminders: bool,
    shipping_news: bool,
    refund_answers: bool,
    merchant_replies: bool,
) -> None:
    NoticeSettings.objects.update_or_create(
        user=user,
        defaults={
            "sale_reminders": sale_reminders,
            "draw_results": draw_results,
            "payment_reminders": payment_reminders,
            "shipping_news": shipping_news,
            "refund_answers": refund_answers,
            "merchant_replies": merchant_replies,
        },
    )
