"""Sale reminders (sales.reminders.services) on real PostgreSQL and Redis: the endpoint's answers, the
calendar file, and the sweep texting each reminder once, even when two sweeps race."""

import re
import unicodedata
from datetime import UTC, datetime, timedelta
from decimal import Decimal

import pytest
from django.test import Client
from django.utils import timezone
from hypothesis import given
from hypothesis import settings as hypothesis_settings
from hypothesis import strategies as st

from goods.models import Goods
from sales import sale_state
from sales.models import Admission, Sale, SaleReminder
from sales.reminders import services as reminders
from testutils import sms_backends
from testutils.factories.goods import make_goods
from testutils.factories.sales import make_sale
from testutils.factories.users import make_user
from users import sms
from users.models import Notice, NoticeSettings, NoticeStatus

pytestmark = pytest.mark.django_db


def texts_to(mobile: str) -> list[str]:
    return [message["text"] for message in sms.outbox if message["mobile"] == mobile]


def logged_in(user) -> Client:
    client = Client()
    client.force_login(user)
    return client


# --- the endpoint ------------------------------------------------------------------------------


def test_a_shopper_turns_a_reminder_on_and_off():
    sale, user = make_sale(starts_in=3600), make_user()
    client = logged_in(user)
    assert client.get(f"/reminders/{sale.pk}").json()["data"] == {"on": False}
    for _ in range(2):  # a double click is harmless
        answer = client.post(f"/reminders/{sale.pk}", {"on": "1"}, HTTP_ACCEPT="application/json")
        assert answer.status_code == 200 and answer.json()["data"] == {"on": True}
    assert SaleReminder.objects.filter(user=user, sale=sale).count() == 1
    assert client.get(f"/reminders/{sale.pk}").json()["data"] == {"on": True}
    assert client.post(f"/reminders/{sale.pk}", {"on": "0"}).json()["data"] == {"on": False}
    assert not SaleReminder.objects.filter(user=user, sale=sale).exists()


@pytest.mark.parametrize(
    ("path", "body", "status"),
    [
        ("/reminders/abc", {"on": "1"}, 400),
        ("/reminders/0", {"on": "1"}, 400),
        ("/reminders/-1", {"on": "1"}, 400),
        ("/reminders/99999999999999999999", {"on": "1"}, 400),
        ("/reminders/987654321", {"on": "1"}, 404),
        ("/reminders/{sale}", {}, 400),
        ("/reminders/{sale}", {"on": "maybe"}, 400),
        ("/reminders/{sale}", {"on": ["1", "0"]}, 200),  # the last value, like any form field
    ],
)
def test_the_reminder_endpoint_answers_bad_input_with_a_4xx_and_changes_nothing(path, body, status):
    sale, user = make_sale(starts_in=3600), make_user()
    answer = logged_in(user).post(path.format(sale=sale.pk), body)
    assert answer.status_code == status
    if status != 200:
        assert answer.json()["code"] != 0 and answer.json()["msg"]
        assert not SaleReminder.objects.exists()


def test_the_reminder_endpoint_wants_a_login_a_csrf_token_and_a_known_method():
    sale = make_sale(starts_in=3600)
    assert Client().post(f"/reminders/{sale.pk}", {"on": "1"}).status_code == 401
    assert Client().get(f"/reminders/{sale.pk}").status_code == 401
    strict = Client(enforce_csrf_checks=True)
    strict.force_login(make_user())
    assert strict.post(f"/reminders/{sale.pk}", {"on": "1"}).status_code == 403
    assert logged_in(make_user()).put(f"/reminders/{sale.pk}").status_code == 405
    assert not SaleReminder.objects.exists()


def test_no_reminder_for_an_ended_sale_nor_one_with_units_to_buy():
    ended, on = make_sale(starts_in=-7200, lasts=3600), make_sale(starts_in=-60, stock=5)
    client = logged_in(make_user())
    for sale in (ended, on):
        answer = client.post(f"/reminders/{sale.pk}", {"on": "1"})
        assert answer.status_code == 409 and answer.json()["msg"]
    assert not SaleReminder.objects.exists()


# --- the item page and the calendar ------------------------------------------------------------


def test_the_item_page_offers_the_reminder_before_the_start_and_while_sold_out_only():
    soon, on, ended = make_sale(starts_in=3600), make_sale(starts_in=-60), make_sale(starts_in=-7200, lasts=3600)
    page = Client().get(f"/goods/detail/{soon.pk}").content.decode()
    assert 'id="remind"' in page and f"/goods/calendar/{soon.pk}.ics" in page and 'data-status="0"' in page
    page = Client().get(f"/goods/detail/{on.pk}").content.decode()
    assert 'id="remind"' in page and "Units may come back" in page and ".ics" not in page
    assert 'id="remind"' not in Client().get(f"/goods/detail/{ended.pk}").content.decode()
    chinese = Client().get(f"/zh-hans/goods/detail/{soon.pk}").content.decode()
    assert "提醒我" in chinese and f"/zh-hans/goods/calendar/{soon.pk}.ics" in chinese


def ics_parse(body: bytes) -> list[tuple[str, str]]:
    """A small RFC 5545 reader: checks CRLF endings and 75-octet lines, unfolds, splits."""
    assert body.endswith(b"\r\n")
    physical = body[:-2].split(b"\r\n")
    assert all(b"\n" not in line and b"\r" not in line for line in physical)
    assert all(len(line) <= 75 for line in physical), [len(line) for line in physical]
    unfolded: list[bytes] = []
    for line in physical:
        if line.startswith(b" "):
            unfolded[-1] += line[1:]
        else:
            unfolded.append(line)
    pairs = []
    for line in unfolded:
        name, value = line.decode("utf-8").split(":", 1)  # a fold inside a character would not decode
        pairs.append((name, value))
    return pairs


def test_the_calendar_file_is_a_valid_event_with_an_alarm_before_the_start(settings):
    settings.SALE_REMINDER_LEAD_SECONDS = 600
    name = ("超长名称的手机, 特价; " * 8)[:64]  # folded across several lines, escaped
    sale = make_sale(goods=make_goods(name=name), starts_in=3600)
    response = Client().get(f"/goods/calendar/{sale.pk}.ics")
    assert response.status_code == 200 and response["Content-Type"] == "text/calendar; charset=utf-8"
    pairs = ics_parse(response.content)
    names = [name for name, _value in pairs]
    assert names[:1] == ["BEGIN"] and pairs[0][1] == "VCALENDAR" and pairs[-1] == ("END", "VCALENDAR")
    assert ("BEGIN", "VEVENT") in pairs and ("BEGIN", "VALARM") in pairs and ("END", "VALARM") in pairs
    fields = dict(pairs)
    assert fields["UID"] == f"sale-{sale.pk}@seckill" and fields["VERSION"] == "2.0"
    start = datetime.strptime(fields["DTSTART"], "%Y%m%dT%H%M%SZ").replace(tzinfo=UTC)
    end = datetime.strptime(fields["DTEND"], "%Y%m%dT%H%M%SZ").replace(tzinfo=UTC)
    assert start == sale.start_at.replace(microsecond=0) and end == sale.end_at.replace(microsecond=0)
    assert fields["TRIGGER"] == "-PT10M"
    assert fields["URL"] == f"http://testserver/goods/detail/{sale.pk}"
    assert name.replace(",", "\\,").replace(";", "\\;") in fields["SUMMARY"]
    chinese = dict(ics_parse(Client().get(f"/zh-hans/goods/calendar/{sale.pk}.ics").content))
    assert chinese["SUMMARY"].startswith("秒杀")
    assert Client().get("/goods/calendar/987654321.ics").status_code == 404
    assert Client().get("/goods/calendar/abc.ics").status_code == 404


# What the shop writes, in order: a line of the file starting anything else was injected.
CALENDAR_PROPERTIES = [
    "BEGIN", "VERSION", "PRODID", "CALSCALE", "METHOD", "BEGIN", "UID", "DTSTAMP", "DTSTART", "DTEND",
    "SUMMARY", "DESCRIPTION", "URL", "BEGIN", "ACTION", "DESCRIPTION", "TRIGGER", "END", "END", "END",
]  # fmt: skip
# Whatever any reader might take for a line's end, and the properties an attacker would start.
HOSTILE = st.sampled_from(
    ["\r", "\n", "\r\n", "\x0b", "\x0c", "\x1c", "\x85", "\u2028", "\u2029", "\x00", "\x1b", "\t", "\x7f",
     "URL:https://evil.example", "ATTACH:https://evil.example/x.exe", "END:VEVENT", ";", ",", "\\", ":", " "]
)  # fmt: skip
HOSTILE_TEXT = st.lists(st.one_of(HOSTILE, st.characters(codec="utf-8")), max_size=40).map("".join)


def calendar_of(*, name: str, title: str, url: str) -> bytes:
    """The calendar file of a sale of goods named `name` and `title`, held in memory only: the
    text reaches the file whatever the database held (rows from before names were checked)."""
    start = datetime(2026, 12, 1, 12, 0, tzinfo=UTC)
    goods = Goods(name=name, title=title, price=Decimal("99.00"))
    sale = Sale(pk=7, goods=goods, seckill_price=Decimal("9.90"), start_at=start, end_at=start, created_at=start)
    return reminders.sale_calendar(sale=sale, url=url).encode()


def lines_any_reader_sees(body: bytes) -> list[str]:
    """The file's lines as the most lenient reader splits them: at every line end it knows."""
    return re.split("\r\n|[\r\n\x0b\x0c\x1c-\x1e\x85\u2028\u2029]", body.decode())


@hypothesis_settings(max_examples=300, deadline=None)
@given(name=HOSTILE_TEXT, title=HOSTILE_TEXT, url=HOSTILE_TEXT)
def test_no_line_of_the_calendar_starts_a_property_the_shop_did_not_write(name, title, url):
    body = calendar_of(name=name, title=title, url=url)
    lines = lines_any_reader_sees(body)
    assert lines.pop() == ""  # the file ends with its last line's CRLF
    starts = [re.match(r"[^:;]*", line).group() for line in lines if not line.startswith(" ")]
    assert starts == CALENDAR_PROPERTIES
    assert not any(unicodedata.category(char) == "Cc" for char in body.decode().replace("\r\n", ""))
    assert all(len(line) <= 75 for line in body.split(b"\r\n"))
    pairs = ics_parse(body)  # CRLF only, 75 octets, unfolded, every line one property
    assert [name for name, _value in pairs] == CALENDAR_PROPERTIES


def test_a_bare_cr_in_the_goods_name_is_no_line_of_the_calendar():
    """A name stored before names were checked: the file still has the shop's lines only."""
    sale = make_sale(goods=make_goods(name="Phone\rURL:https://evil.example", title="t\r\nATTACH:x"), starts_in=3600)
    body = Client().get(f"/goods/calendar/{sale.pk}.ics").content
    assert b"\rURL" not in body and b"\nATTACH" not in body
    pairs = ics_parse(body)
    assert [name for name, _value in pairs] == CALENDAR_PROPERTIES
    assert "URL:https://evil.example" in dict(pairs)["SUMMARY"] and ("DESCRIPTION", "t\\nATTACH:x") in pairs


# --- the sweep ---------------------------------------------------------------------------------


def remind(sale, *users) -> None:
    for user in users:
        SaleReminder.objects.create(user=user, sale=sale)


def test_the_sweep_texts_each_reminder_once_within_the_lead_time(settings):
    settings.SALE_REMINDER_LEAD_SECONDS = 600
    soon, later, gone = make_sale(starts_in=300), make_sale(starts_in=3600), make_sale(starts_in=-7200, lasts=3600)
    first, second, off = make_user(), make_user(), make_user()
    NoticeSettings.objects.create(user=off, sale_reminders=False)
    remind(soon, first, second, off)
    remind(later, first)
    remind(gone, first)
    assert reminders.sale_reminders_send() == 2
    assert reminders.sale_reminders_send() == 0
    assert len(texts_to(first.mobile)) == 1 and "goes on sale at" in texts_to(first.mobile)[0]
    assert f"/goods/detail/{soon.pk}" in texts_to(second.mobile)[0]
    assert texts_to(off.mobile) == []
    assert Notice.objects.get(key=f"sale-reminder:{soon.pk}:{off.pk}").status == NoticeStatus.SKIPPED


def test_a_sold_out_watch_is_texted_once_when_a_unit_comes_back():
    sale, watcher = make_sale(starts_in=-60, stock=1), make_user()
    take = sale_state.stock_take(sale_id=sale.pk, count=1)  # sold out
    assert take.taken
    remind(sale, watcher)
    assert reminders.sale_reminders_send() == 0
    assert sale_state.stock_add(sale_id=sale.pk, count=1, ticket=take.ticket)  # a unit comes back
    assert reminders.sale_reminders_send() == 1
    assert reminders.sale_reminders_send() == 0
    assert len(texts_to(watcher.mobile)) == 1 and "back on sale" in texts_to(watcher.mobile)[0]


def test_a_popular_sales_reminders_leave_sign_up_codes_their_reserve_and_wait(settings):
    """More reminders than the hour has room for: codes still go, the rest of the reminders wait
    (pending, not failed) and go in a later hour while the sale has not opened, else are skipped."""
    from seckill_site.redis import client as redis
    from seckill_site.redis import now as redis_now
    from users import notices
    from users.verification import keys
    from users.verification.services import sms_code_send

    settings.SALE_REMINDER_LEAD_SECONDS = 600
    settings.SMS_SENDS_PER_HOUR, settings.SMS_CODE_RESERVE_PER_HOUR = 6, 2
    sale = make_sale(starts_in=300)
    shoppers = [make_user() for _ in range(10)]
    remind(sale, *shoppers)
    assert reminders.sale_reminders_send() == 4  # 6 less the codes' 2
    assert sms_code_send(mobile="13712345678", purpose="register", requester="10.8.0.1").sent  # a new shopper
    assert reminders.sale_reminders_send() == 0  # still no room: they wait
    keys_of = [f"sale-reminder:{sale.pk}:{user.pk}" for user in shoppers]
    assert sorted(Notice.objects.filter(key__in=keys_of).values_list("status", flat=True)) == ["pending"] + ["sent"] * 4

    redis().delete(keys.sms_shop_hour(int(redis_now() // 3600)))  # the next hour
    assert reminders.sale_reminders_send() == 4
    assert reminders.sale_reminders_send() == 0
    assert [len(texts_to(user.mobile)) for user in shoppers] == [1] * 8 + [0, 0]  # at most once each
    waiting = Notice.objects.get(key__in=keys_of, status="pending")
    sale.start_at = sale.start_at - timedelta(seconds=600)  # the sale opens before there is room again
    sale.save(update_fields=["start_at"])
    Notice.objects.filter(pk=waiting.pk).update(worth_until=sale.start_at)
    assert notices.notices_expire() == 1
    assert Notice.objects.get(pk=waiting.pk).status == "skipped" and texts_to(shoppers[8].mobile) == []
    assert reminders.sale_reminders_send() == 0  # opened: nothing more goes


@pytest.mark.django_db(transaction=True)
def test_two_sweeps_racing_text_each_reminder_once(settings):
    settings.SMS_BACKEND = "testutils.sms_backends.CountingSmsBackend"
    settings.SALE_REMINDER_LEAD_SECONDS = 600
    sale = make_sale(starts_in=300)
    users = [make_user() for _ in range(6)]
    remind(sale, *users)
    sms_backends.sweeps_race(reminders.sale_reminders_send)
    keys = {f"sale-reminder:{sale.pk}:{user.pk}" for user in users}
    assert sorted(key for key, _mobile in sms_backends.calls if key in keys) == sorted(keys)
    assert Notice.objects.filter(key__in=keys, status=NoticeStatus.SENT).count() == len(users)


# --- a draw's reminders: about entering ---------------------------------------------------------


def draw_sale(*, entries_in: int, starts_in: int, window: int = 0) -> Sale:
    """A draw sale whose entries open `entries_in` seconds from now (ahead of its start), drawn
    `window` seconds after the start (0: at the start)."""
    now = timezone.now()
    return make_sale(
        starts_in=starts_in,
        warm=False,
        admission=Admission.DRAW,
        draw_window_s=window,
        entries_open_at=now + timedelta(seconds=entries_in),
    )


def asked_earlier(sale: Sale) -> None:
    """The sale's reminders were asked an hour ago (the tests move the sale's times instead of
    the clock)."""
    SaleReminder.objects.filter(sale=sale).update(created_at=timezone.now() - timedelta(hours=1))


def move(sale: Sale, *, entries_in: int, starts_in: int) -> None:
    """The clock moves on: entries open `entries_in` seconds from now, the sale starts `starts_in`."""
    now = timezone.now()
    sale.entries_open_at = now + timedelta(seconds=entries_in)
    sale.start_at = now + timedelta(seconds=starts_in)
    sale.end_at = sale.start_at + timedelta(hours=1)
    sale.save(update_fields=["entries_open_at", "start_at", "end_at"])


def test_a_draws_reminder_is_texted_when_entries_open_and_before_they_close(settings):
    """Not "goes on sale at" before the start (when entries have long been open, or the draw is
    made): the first text when entries open, the second SALE_REMINDER_LEAD_SECONDS before they
    close, each once, in the shopper's language, saying it is a draw and entering counts."""
    settings.SALE_REMINDER_LEAD_SECONDS = 600
    sale = draw_sale(entries_in=300, starts_in=1200)
    english, chinese = make_user(), make_user(language="zh-hans")
    remind(sale, english, chinese)
    asked_earlier(sale)
    assert reminders.sale_reminders_send() == 0  # entries not open yet

    move(sale, entries_in=-1, starts_in=1200)  # entries open, 20 minutes to go
    assert reminders.sale_reminders_send() == 2
    assert reminders.sale_reminders_send() == 0
    until = timezone.localtime(sale.start_at).strftime("%Y-%m-%d %H:%M")
    [opened] = texts_to(english.mobile)
    assert opened.startswith(f"Entries are open for the draw of {sale.goods.name}")
    assert f"until {until} (" in opened and "It is a draw, not first come" in opened
    assert f"/goods/detail/{sale.pk}" in opened and "goes on sale" not in opened
    [opened_zh] = texts_to(chinese.mobile)
    assert "抽签报名已开始" in opened_zh and until in opened_zh and "先到先得" in opened_zh

    move(sale, entries_in=-1200, starts_in=300)  # entries close (the draw) in 5 minutes
    assert reminders.sale_reminders_send() == 2
    assert reminders.sale_reminders_send() == 0
    closing = texts_to(english.mobile)[1]
    assert f"Entries for the draw of {sale.goods.name} close at" in closing
    assert "Only those who enter are drawn" in closing
    assert "抽签报名将于" in texts_to(chinese.mobile)[1] and "只有报名的人才会参加抽签" in texts_to(chinese.mobile)[1]
    assert [len(texts_to(user.mobile)) for user in (english, chinese)] == [2, 2]
    keys = set(Notice.objects.filter(user=english).values_list("key", flat=True))
    assert keys == {f"sale-entries-open:{sale.pk}:{english.pk}", f"sale-entries-closing:{sale.pk}:{english.pk}"}

    move(sale, entries_in=-1800, starts_in=-1)  # drawn: nothing more about it
    assert reminders.sale_reminders_send() == 0


def test_a_draw_entered_in_its_window_after_the_start_is_texted_once_when_entries_open(settings):
    """Entries in a 60-second window after the start: too short for a second text, and the
    first says until when."""
    settings.SALE_REMINDER_LEAD_SECONDS = 600
    sale = make_sale(starts_in=300, warm=False, admission=Admission.DRAW, draw_window_s=60)
    shopper = make_user()
    remind(sale, shopper)
    asked_earlier(sale)
    assert reminders.sale_reminders_send() == 0  # first come's "goes on sale" is not a draw's
    sale.start_at = timezone.now() - timedelta(seconds=5)
    sale.save(update_fields=["start_at"])
    assert reminders.sale_reminders_send() == 1
    assert reminders.sale_reminders_send() == 0
    [text] = texts_to(shopper.mobile)
    assert text.startswith("Entries are open for the draw")


def test_a_reminder_asked_while_entries_are_open_is_texted_only_before_they_close(settings):
    settings.SALE_REMINDER_LEAD_SECONDS = 600
    sale = draw_sale(entries_in=-1, starts_in=3600)
    late = make_user()
    remind(sale, late)
    assert reminders.sale_reminders_send() == 0  # it is open: the shopper saw that on the page
    move(sale, entries_in=-3600, starts_in=300)
    assert reminders.sale_reminders_send() == 1
    [text] = texts_to(late.mobile)
    assert "close at" in text


# --- the box after the opening -----------------------------------------------------------------


def test_the_starts_reminder_is_spent_at_the_opening_and_asked_again_it_watches_for_a_unit():
    """The item page is not loaded again at the opening, so its box turns into "a unit comes
    back" in the browser: pressed there on a sold-out sale, it is a watch for a unit, never
    "buy one instead", and the start's reminder no longer counts as on."""
    sale, shopper = make_sale(starts_in=300, stock=1), make_user()
    client = logged_in(shopper)
    assert client.post(f"/reminders/{sale.pk}", {"on": "1"}).json()["data"] == {"on": True}
    asked_earlier(sale)
    sale.start_at = timezone.now() - timedelta(seconds=10)  # it opens, and sells out
    sale.save(update_fields=["start_at"])
    take = sale_state.stock_take(sale_id=sale.pk, count=1)
    assert take.taken
    assert client.get(f"/reminders/{sale.pk}").json()["data"] == {"on": False}  # the start's, spent
    pressed = client.post(f"/reminders/{sale.pk}", {"on": "1"})
    assert pressed.status_code == 200 and pressed.json()["data"] == {"on": True}
    assert SaleReminder.objects.filter(sale=sale).count() == 1
    assert sale_state.stock_add(sale_id=sale.pk, count=1, ticket=take.ticket)  # a unit comes back
    assert reminders.sale_reminders_send() == 1
    assert "back on sale" in texts_to(shopper.mobile)[0]


def test_the_box_before_the_start_carries_the_words_it_turns_into_at_the_opening():
    soon = make_sale(starts_in=3600)
    page = Client().get(f"/goods/detail/{soon.pk}").content.decode()
    box = re.search(r'<section id="remind".*?</section>', page, re.DOTALL).group(0)
    assert 'data-title-back="Units may come back"' in box and 'id="remind-calendar"' in box
    assert 'data-said-on-back="Reminder on: we will text you when a unit comes back."' in box
    chinese = Client().get(f"/zh-hans/goods/detail/{soon.pk}").content.decode()
    assert 'data-title-back="Units may come back"' not in chinese


def test_a_draws_box_promises_the_texts_about_entering():
    from sales.services import draw_seed_ensure, sale_open

    ahead = draw_sale(entries_in=300, starts_in=3600)
    entering = draw_sale(entries_in=-60, starts_in=3600)
    for sale in (ahead, entering):
        draw_seed_ensure(sale=sale)
        sale_open(sale_id=sale.pk)
    box = re.search(
        r'<section id="remind".*?</section>', Client().get(f"/goods/detail/{ahead.pk}").content.decode(), re.S
    )
    assert "Don't miss the draw" in box.group(0) and "when entries to the draw open" in box.group(0)
    assert "minutes before the sale starts" not in box.group(0)
    page = Client().get(f"/goods/detail/{entering.pk}").content.decode()
    assert "before entries to the draw close" in re.search(r'<section id="remind".*?</section>', page, re.S).group(0)
    chinese = Client().get(f"/zh-hans/goods/detail/{ahead.pk}").content.decode()
    assert "抽签报名开始时收到短信提醒" in chinese
