"""Sale reminders: a shopper asks to be texted about a sale, and can put it in a calendar.

A reminder asked before a first-come sale opens is texted SALE_REMINDER_LEAD_SECONDS before
the opening. A draw sale is about entering, not being first: its reminder is texted when
entries open (to a shopper who asked before then), and again SALE_REMINDER_LEAD_SECONDS before
they close, unless the entry period is too short for two texts (the first says until when). One
asked while the sale is on and sold out ("units may come back": an order cancelled or not paid
in time gives one back) is texted once when beat's sweep sees units left. Each is a notice of
its own (users.notices: "sale-reminder:<sale>:<user>", "sale-entries-open:…",
"sale-entries-closing:…", "sale-restock:…"), so it goes at most once however often the sweep
runs, and a sender that died is finished by the next sweep. Each goes while it is worth
something: before the opening, before entries close, while the sale is on; one that waited for
the hour's text-message budget past that is skipped (users.notices).
"""

import logging
import re
from datetime import UTC, datetime, timedelta

from django.conf import settings
from django.db import IntegrityError, transaction
from django.db.models import (
    CharField,
    DateTimeField,
    DurationField,
    Exists,
    ExpressionWrapper,
    F,
    OuterRef,
    Q,
    QuerySet,
    Value,
)
from django.db.models.functions import Cast, Coalesce, Concat
from django.db.models.lookups import GreaterThan, LessThan, LessThanOrEqual
from django.utils import timezone, translation
from django.utils.translation import gettext as _

from sales import sale_state
from sales.models import Admission, Sale, SaleReminder, SaleStatus
from seckill_site.text import is_control
from users import notices
from users.models import Notice, NoticeKind, User

logger = logging.getLogger(__name__)

OPENING = "sale-reminder"
ENTRIES_OPEN = "sale-entries-open"
ENTRIES_CLOSING = "sale-entries-closing"
RESTOCK = "sale-restock"
# Reminders sent per sweep at most: a sale with more waits for the next sweep.
SWEEP_BATCH = 2000


class ReminderRefused(Exception):
    """This sale takes no reminder now: it has ended, or it is on with units left."""


def notice_key(kind: str, sale_id: int, user_id: int) -> str:
    return f"{kind}:{sale_id}:{user_id}"


def sale_reminder_set(*, user: User, sale_id: int, on: bool) -> bool:
    """Turn the shopper's reminder of the sale on or off; repeating either is harmless. Raises
    Sale.DoesNotExist, or ReminderRefused when turning it on is pointless."""
    sale = Sale.objects.get(pk=sale_id)
    if not on:
        SaleReminder.objects.filter(user=user, sale=sale).delete()
        return False
    status = sale.status_at()
    if status == SaleStatus.ENDED:
        raise ReminderRefused(_("This sale has ended."))
    if status == SaleStatus.ON and (sale_state.stock_left([sale.pk])[sale.pk] or 0) > 0:
        raise ReminderRefused(_("Units are on sale now: buy one instead."))
    try:
        with transaction.atomic():
            reminder, made = SaleReminder.objects.get_or_create(user=user, sale=sale)
            if not made and status == SaleStatus.ON and reminder.created_at <= sale.start_at:
                # The start's reminder is spent: asked again on the sold-out page, it becomes
                # a watch for a unit coming back (the sweep's RESTOCK: asked after the start).
                SaleReminder.objects.filter(pk=reminder.pk).update(created_at=timezone.now())
    except IntegrityError:
        pass  # a double click's other request made it
    return True


def sale_reminder_on(*, user: User, sale_id: int) -> bool:
    """Whether the shopper's reminder of the sale is on: before the start, any; once the sale
    is on, a watch for a unit coming back (one asked after the start), which a reminder of the
    start, spent, is not."""
    found = SaleReminder.objects.filter(user=user, sale_id=sale_id)
    return found.filter(Q(sale__start_at__gt=timezone.now()) | Q(created_at__gt=F("sale__start_at"))).exists()


def _not_done(reminders: QuerySet[SaleReminder], kind: str) -> QuerySet[SaleReminder]:
    """The reminders whose notice of `kind` is not finished (none yet, or left by a sender)."""
    key = Concat(
        Value(f"{kind}:"),
        Cast(OuterRef("sale_id"), CharField()),
        Value(":"),
        Cast(OuterRef("user_id"), CharField()),
        output_field=CharField(),
    )
    done = Notice.objects.filter(key=key, status__in=notices.DONE)
    return reminders.exclude(Exists(done)).select_related("user", "sale__goods").order_by("pk")


def _when(moment: datetime) -> str:
    return timezone.localtime(moment).strftime("%Y-%m-%d %H:%M")


def _text(reminder: SaleReminder, kind: str) -> str:
    sale = reminder.sale
    link = f"{settings.SHOP_PUBLIC_URL}/goods/detail/{sale.pk}"
    with translation.override(notices.notice_language(reminder.user)):
        # The goods' name in the shopper's language too (goods.translation), so read in here.
        words = {"name": sale.goods.name, "price": sale.seckill_price, "zone": settings.TIME_ZONE, "link": link}
        if kind == RESTOCK:
            return _("A unit of %(name)s is back on sale at ¥%(price)s: %(link)s") % words
        if kind == ENTRIES_OPEN:
            return _(
                "Entries are open for the draw of %(name)s at ¥%(price)s until %(time)s (%(zone)s). "
                "It is a draw, not first come: enter before then to be in it: %(link)s"
            ) % {**words, "time": _when(sale.draw_at)}
        if kind == ENTRIES_CLOSING:
            return _(
                "Entries for the draw of %(name)s close at %(time)s (%(zone)s). Only those who enter "
                "are drawn; if you have not entered yet, enter now: %(link)s"
            ) % {**words, "time": _when(sale.draw_at)}
        return _("%(name)s goes on sale at %(time)s (%(zone)s) for ¥%(price)s: %(link)s") % {
            **words,
            "time": timezone.localtime(sale.start_at).strftime("%H:%M"),
        }


def _worth_until(sale: Sale, kind: str) -> datetime:
    if kind == RESTOCK:
        return sale.end_at
    if kind in (ENTRIES_OPEN, ENTRIES_CLOSING):
        return sale.draw_at
    return sale.start_at


def _send(reminders: list[SaleReminder], kind: str) -> int:
    sent = 0
    for reminder in reminders:
        sale = reminder.sale
        # One bad reminder never holds up the others: it stays unfinished for the next sweep.
        try:
            status = notices.notice_send(
                user=reminder.user,
                kind=NoticeKind.SALE_REMINDER,
                key=notice_key(kind, reminder.sale_id, reminder.user_id),
                text=_text(reminder, kind),
                worth_until=_worth_until(sale, kind),
            )
        except Exception:
            logger.exception("reminder %s of sale %s failed", reminder.pk, reminder.sale_id)
            continue
        if status == notices.WAITING:
            break  # the hour has no room for notices: the rest wait for a later sweep too
        sent += status == "sent"
    return sent


# A draw sale's entry period, over a reminder's sale: entries open at entries_open_at (else at
# the start) and close at the draw, draw_window_s after the start (Sale.entries_from, draw_at).
_ENTRIES_FROM = Coalesce(F("sale__entries_open_at"), F("sale__start_at"))
_ENTRIES_UNTIL = ExpressionWrapper(
    F("sale__start_at")
    + ExpressionWrapper(F("sale__draw_window_s") * timedelta(seconds=1), output_field=DurationField()),
    output_field=DateTimeField(),
)


def sale_reminders_send() -> int:
    """Beat's sweep: text the reminders due (see the module docstring); how many were sent."""
    now = timezone.now()
    lead = timedelta(seconds=settings.SALE_REMINDER_LEAD_SECONDS)
    opening = SaleReminder.objects.filter(
        sale__start_at__gt=now, sale__start_at__lte=now + lead, sale__admission=Admission.FCFS
    )
    sent = _send(list(_not_done(opening, OPENING)[:SWEEP_BATCH]), OPENING)
    # A draw's: when entries open, to those who asked before; before they close, where the
    # entry period leaves room for a second text after the first.
    entering = SaleReminder.objects.filter(
        LessThanOrEqual(_ENTRIES_FROM, Value(now)),
        GreaterThan(_ENTRIES_UNTIL, Value(now)),
        sale__admission=Admission.DRAW,
    )
    entries_open = entering.filter(LessThan(F("created_at"), _ENTRIES_FROM))
    sent += _send(list(_not_done(entries_open, ENTRIES_OPEN)[:SWEEP_BATCH]), ENTRIES_OPEN)
    closing = entering.filter(
        LessThanOrEqual(_ENTRIES_UNTIL, Value(now + lead)), LessThan(_ENTRIES_FROM, _ENTRIES_UNTIL - Value(lead))
    )
    sent += _send(list(_not_done(closing, ENTRIES_CLOSING)[:SWEEP_BATCH]), ENTRIES_CLOSING)
    watching = SaleReminder.objects.filter(
        sale__start_at__lte=now, sale__end_at__gt=now, created_at__gt=F("sale__start_at")
    )
    # Only the sales with units back: a sale that stays sold out never takes a batch's room.
    watched = sorted(set(watching.values_list("sale_id", flat=True)))
    back = [sale_id for sale_id, left in sale_state.stock_left(watched).items() if (left or 0) > 0]
    return sent + _send(list(_not_done(watching.filter(sale_id__in=back), RESTOCK)[:SWEEP_BATCH]), RESTOCK)


# --- the sale in a calendar (RFC 5545) ---------------------------------------------------------


# Every line end a reader might honour (CRLF, CR, LF, NEL, the Unicode separators) is one.
_LINE_ENDS = re.compile("\r\n|[\r\n\x0b\x0c\x1c-\x1e\x85\u2028\u2029]")


def _ics_plain(value: str) -> str:
    """`value` with its line ends made LF and every other control character dropped: nothing
    left in it can end a content line, whatever the stored text holds."""
    lines = _LINE_ENDS.sub("\n", value)
    return "".join(char for char in lines if char == "\n" or not is_control(char))


def _ics_uri(value: str) -> str:
    """A URI value: no line end or control character at all."""
    return "".join(char for char in value if not is_control(char))


def _ics_text(value: str) -> str:
    """A TEXT value (RFC 5545 3.3.11): escaped, its line ends as the two characters `\\n`."""
    plain = _ics_plain(value)
    return plain.replace("\\", "\\\\").replace(";", "\\;").replace(",", "\\,").replace("\n", "\\n")


def _ics_time(moment: datetime) -> str:
    return moment.astimezone(UTC).strftime("%Y%m%dT%H%M%SZ")


def _ics_fold(line: str) -> str:
    """A content line folded at 75 octets (RFC 5545 3.1), never inside a UTF-8 character: each
    continuation starts with a space, which counts toward its 75."""
    parts, current, size = [], "", 0
    for char in line:
        width = len(char.encode())
        if size + width > 75:
            parts.append(current)
            current, size = " ", 1
        current += char
        size += width
    parts.append(current)
    return "\r\n".join(parts)


def sale_calendar(*, sale: Sale, url: str) -> str:
    """The sale as an iCalendar event from its start to its end, with an alarm
    SALE_REMINDER_LEAD_SECONDS before the start. The same bytes for everyone: no shopper in it."""
    summary = _("Flash sale: %(name)s at ¥%(price)s") % {"name": sale.goods.name, "price": sale.seckill_price}
    minutes = max(1, settings.SALE_REMINDER_LEAD_SECONDS // 60)
    lines = [
        "BEGIN:VCALENDAR",
        "VERSION:2.0",
        "PRODID:-//Seckill//Flash sales//EN",
        "CALSCALE:GREGORIAN",
        "METHOD:PUBLISH",
        "BEGIN:VEVENT",
        f"UID:sale-{sale.pk}@seckill",
        f"DTSTAMP:{_ics_time(sale.created_at)}",
        f"DTSTART:{_ics_time(sale.start_at)}",
        f"DTEND:{_ics_time(sale.end_at)}",
        f"SUMMARY:{_ics_text(summary)}",
        f"DESCRIPTION:{_ics_text(sale.goods.title)}",
        f"URL:{_ics_uri(url)}",
        "BEGIN:VALARM",
        "ACTION:DISPLAY",
        f"DESCRIPTION:{_ics_text(summary)}",
        f"TRIGGER:-PT{minutes}M",
        "END:VALARM",
        "END:VEVENT",
        "END:VCALENDAR",
    ]
    return "".join(_ics_fold(line) + "\r\n" for line in lines)
