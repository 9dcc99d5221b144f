"""Notices (users.notices) on real PostgreSQL and Redis: each key is texted at most once, the
shopper's settings and the text-message limits are honoured, a refusal is final, and a sender
that died is taken over after its claim lapses, the provider dropping the repeated key."""

import json
import threading
from datetime import timedelta

import pytest
from django.db import connection
from django.utils import timezone
from prometheus_client import REGISTRY

from seckill_site.redis import client as redis
from seckill_site.redis import now as redis_now
from testutils import sms_backends
from testutils.factories.users import make_user
from users import notices, sms
from users.models import Notice, NoticeKind, NoticeSettings, NoticeStatus
from users.verification import keys

pytestmark = pytest.mark.django_db

KIND = NoticeKind.PAY_REMINDER


def counted(kind: str, result: str) -> float:
    return REGISTRY.get_sample_value("seckill_notices_total", {"kind": kind, "result": result}) or 0.0


def texts_to(mobile: str) -> list[str]:
    return [message["text"] for message in sms.outbox if message["mobile"] == mobile]


class FailingSmsBackend(sms.BaseSmsBackend):
    def send(self, *, mobile: str, text: str, key: str | None = None) -> None:
        raise sms.SmsError("provider down")


def test_a_notice_is_texted_once_however_often_it_is_sent():
    user = make_user()
    before = counted(KIND, "sent")
    statuses = [notices.notice_send(user=user, kind=KIND, key=f"t:{user.pk}", text="hello") for _ in range(3)]
    assert statuses == ["sent", "sent", "sent"]
    assert texts_to(user.mobile) == ["hello"]
    notice = Notice.objects.get(key=f"t:{user.pk}")
    assert notice.tries == 1 and notice.sent_at is not None
    assert counted(KIND, "sent") - before == 1


def test_a_kind_the_shopper_turned_off_is_recorded_as_skipped_and_not_texted():
    user = make_user()
    NoticeSettings.objects.create(user=user, payment_reminders=False)
    before = counted(KIND, "skipped")
    assert notices.notice_send(user=user, kind=KIND, key=f"t:{user.pk}", text="hello") == "skipped"
    assert notices.notice_send(user=user, kind=NoticeKind.DRAW_WON, key=f"d:{user.pk}", text="won") == "sent"
    assert texts_to(user.mobile) == ["won"]
    assert Notice.objects.get(key=f"t:{user.pk}").reason == "turned off"
    assert counted(KIND, "skipped") - before == 1


def test_the_numbers_daily_cap_refuses_a_notice_for_good_and_counts_it(settings):
    settings.SMS_SENDS_PER_NUMBER_PER_DAY = 2
    user = make_user()
    before = counted(KIND, "number_day")
    sms_before = REGISTRY.get_sample_value("seckill_sms_messages_total", {"result": "number_day"}) or 0.0
    statuses = [notices.notice_send(user=user, kind=KIND, key=f"t:{user.pk}:{n}", text=f"m{n}") for n in range(3)]
    assert statuses == ["sent", "sent", "failed"]
    refused = Notice.objects.get(key=f"t:{user.pk}:2")
    assert (refused.status, refused.reason, refused.tries) == (NoticeStatus.FAILED, "number_day", 1)
    # Not retried: sending it again finds it done and texts nothing.
    assert notices.notice_send(user=user, kind=KIND, key=f"t:{user.pk}:2", text="m2") == "failed"
    assert texts_to(user.mobile) == ["m0", "m1"] and Notice.objects.get(pk=refused.pk).tries == 1
    assert counted(KIND, "number_day") - before == 1
    assert (REGISTRY.get_sample_value("seckill_sms_messages_total", {"result": "number_day"}) or 0.0) - sms_before == 1


def hour_turns() -> None:
    """The shop's hour ends: its count starts again (the key is the epoch hour's)."""
    redis().delete(keys.sms_shop_hour(int(redis_now() // 3600)))


def test_notices_leave_the_codes_reserve_and_wait_for_the_next_hour(settings):
    from users.verification.services import sms_code_send

    settings.SMS_SENDS_PER_HOUR, settings.SMS_CODE_RESERVE_PER_HOUR = 5, 2
    shoppers = [make_user() for _ in range(4)]
    before = counted(KIND, "waiting")
    statuses = [notices.notice_send(user=u, kind=KIND, key=f"t:{u.pk}", text=f"m{u.pk}") for u in shoppers]
    assert statuses == ["sent", "sent", "sent", notices.WAITING]  # 5 less the 2 kept for codes
    waiting = Notice.objects.get(key=f"t:{shoppers[3].pk}")
    assert (waiting.status, waiting.reason, waiting.tries) == (NoticeStatus.PENDING, "shop_hour", 0)
    assert counted(KIND, "waiting") - before == 1 and texts_to(shoppers[3].mobile) == []
    # The reserve: a new shopper's codes still go, up to the cap itself.
    codes = [sms_code_send(mobile=f"1370000000{n}", purpose="register", requester="10.7.0.1") for n in range(3)]
    assert [code.sent for code in codes] == [True, True, False]
    hour_turns()
    assert notices.notice_send(user=shoppers[3], kind=KIND, key=f"t:{shoppers[3].pk}", text="x") == "sent"
    assert texts_to(shoppers[3].mobile) == [f"m{shoppers[3].pk}"]  # once, its first text
    assert Notice.objects.get(pk=waiting.pk).tries == 1


def test_a_notice_the_numbers_cap_refuses_gives_its_hour_back(settings):
    settings.SMS_SENDS_PER_NUMBER_PER_DAY = 0
    user = make_user()
    assert notices.notice_send(user=user, kind=KIND, key=f"t:{user.pk}", text="x") == "failed"
    assert redis().get(keys.sms_shop_hour(int(redis_now() // 3600))) in (None, b"0")


def test_a_notice_past_its_worth_is_skipped_too_late_never_sent(settings):
    settings.SMS_SENDS_PER_HOUR, settings.SMS_CODE_RESERVE_PER_HOUR = 1, 1  # no room for notices
    late, waiting, sent, held = make_user(), make_user(), make_user(), make_user()
    now = timezone.now()
    soon = now + timedelta(minutes=5)
    assert notices.notice_send(user=waiting, kind=KIND, key=f"w:{waiting.pk}", text="w", worth_until=soon) == (
        notices.WAITING
    )
    past = now - timedelta(seconds=1)
    assert notices.notice_send(user=late, kind=KIND, key=f"l:{late.pk}", text="l", worth_until=past) == "skipped"
    assert Notice.objects.get(key=f"l:{late.pk}").reason == notices.TOO_LATE
    Notice.objects.create(user=sent, kind=KIND, key=f"s:{sent.pk}", text="s", worth_until=past, status="sent")
    Notice.objects.create(  # a sender holds it now: it finishes it itself
        user=held, kind=KIND, key=f"h:{held.pk}", text="h", worth_until=past, status="sending", claimed_at=now
    )
    before = counted(KIND, "too_late")
    assert notices.notices_expire() == 0  # the waiting one is still worth sending
    Notice.objects.filter(key=f"w:{waiting.pk}").update(worth_until=past)  # its time passes
    assert notices.notices_expire() == 1
    statuses = dict(Notice.objects.filter(user__in=[waiting, sent, held]).values_list("key", "status"))
    assert statuses == {f"w:{waiting.pk}": "skipped", f"s:{sent.pk}": "sent", f"h:{held.pk}": "sending"}
    assert Notice.objects.get(key=f"w:{waiting.pk}").reason == notices.TOO_LATE
    assert counted(KIND, "too_late") - before == 1
    hour_turns()
    settings.SMS_CODE_RESERVE_PER_HOUR = 0
    assert notices.notice_send(user=waiting, kind=KIND, key=f"w:{waiting.pk}", text="w") == "skipped"
    assert texts_to(waiting.mobile) == texts_to(late.mobile) == []


def test_the_scrape_reads_this_hours_messages_and_both_limits(settings):
    from users.metrics import sms_figures

    settings.SMS_SENDS_PER_HOUR, settings.SMS_CODE_RESERVE_PER_HOUR = 50, 20
    for user in (make_user(), make_user()):
        notices.notice_send(user=user, kind=KIND, key=f"m:{user.pk}", text="m")
    figures = {sample.name + str(sample.labels): sample.value for family in sms_figures() for sample in family.samples}
    assert figures == {
        "seckill_sms_shop_hour_messages{}": 2,
        "seckill_sms_shop_hour_limit{'sender': 'all'}": 50,
        "seckill_sms_shop_hour_limit{'sender': 'notices'}": 30,
    }


@pytest.mark.django_db(transaction=True)
def test_racing_senders_never_take_more_than_the_notices_part_of_the_hour(settings):
    settings.SMS_SENDS_PER_HOUR, settings.SMS_CODE_RESERVE_PER_HOUR = 12, 4
    users = [make_user() for _ in range(16)]
    start = threading.Barrier(4)
    answers: list = []

    def sender(mine: list) -> None:
        try:
            start.wait()
            for user in mine:
                answers.append(notices.notice_send(user=user, kind=KIND, key=f"part:{user.pk}", text="p"))
        finally:
            connection.close()

    threads = [threading.Thread(target=sender, args=(users[n::4],)) for n in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert answers.count("sent") == 8 and answers.count(notices.WAITING) == 8
    assert int(redis().get(keys.sms_shop_hour(int(redis_now() // 3600)))) == 8
    statuses = Notice.objects.filter(key__startswith="part:").values_list("status", flat=True)
    assert sorted(statuses) == ["pending"] * 8 + ["sent"] * 8


def test_a_provider_failure_is_tried_again_then_given_up(settings):
    settings.SMS_BACKEND = "users.tests.test_notices.FailingSmsBackend"
    settings.NOTICE_SEND_TRIES = 2
    user = make_user()
    key = f"t:{user.pk}"
    assert notices.notice_send(user=user, kind=KIND, key=key, text="x") == "pending"
    assert notices.notice_send(user=user, kind=KIND, key=key, text="x") == "failed"
    assert notices.notice_send(user=user, kind=KIND, key=key, text="x") == "failed"
    notice = Notice.objects.get(key=key)
    assert (notice.tries, notice.reason) == (2, "provider: provider down")


def test_a_fresh_claim_is_left_alone_and_a_lapsed_one_taken_over(settings):
    settings.NOTICE_CLAIM_SECONDS = 60
    user = make_user()
    key = f"t:{user.pk}"
    claimed = timezone.now()
    Notice.objects.create(
        user=user, kind=KIND, key=key, text="x", status=NoticeStatus.SENDING, claimed_at=claimed, tries=1
    )
    assert notices.notice_send(user=user, kind=KIND, key=key, text="x") == notices.BUSY
    assert texts_to(user.mobile) == []
    Notice.objects.filter(key=key).update(claimed_at=claimed - timedelta(seconds=61))
    assert notices.notice_send(user=user, kind=KIND, key=key, text="x") == "sent"
    assert texts_to(user.mobile) == ["x"] and Notice.objects.get(key=key).tries == 2


def test_a_sender_whose_claim_was_taken_over_changes_nothing():
    user = make_user()
    notice = Notice.objects.create(user=user, kind=KIND, key=f"t:{user.pk}", text="x")
    assert notices._claim(notice)
    Notice.objects.filter(pk=notice.pk).update(claimed_at=timezone.now() + timedelta(seconds=1))  # another's claim
    notices._finish(notice, NoticeStatus.SENT)
    assert Notice.objects.get(pk=notice.pk).status == NoticeStatus.SENDING


def test_the_file_backend_drops_a_key_it_has_seen_as_a_provider_does(settings, tmp_path):
    settings.SMS_FILE_PATH = str(tmp_path / "sms.log")
    for _ in range(2):
        sms.FileSmsBackend().send(mobile="13000000001", text="once", key="k1")
    sms.FileSmsBackend().send(mobile="13000000001", text="code", key=None)
    sms.FileSmsBackend().send(mobile="13000000001", text="code", key=None)
    lines = [json.loads(line) for line in (tmp_path / "sms.log").read_text().splitlines()]
    assert [line["text"] for line in lines] == ["once", "code", "code"]


def test_the_locmem_backend_drops_a_key_it_has_seen():
    for _ in range(2):
        sms.LocmemSmsBackend().send(mobile="13000000002", text="once", key="locmem-k1")
    assert [m["text"] for m in sms.outbox if m["key"] == "locmem-k1"] == ["once"]


@pytest.mark.django_db(transaction=True)
def test_two_senders_racing_for_one_notice_call_the_provider_once(settings):
    """The claim, not the provider's deduplication, keeps the second sender off: the counting
    backend records every call, repeats included."""
    settings.SMS_BACKEND = "testutils.sms_backends.CountingSmsBackend"
    users = [make_user() for _ in range(5)]
    start = threading.Barrier(2)
    answers: list = []

    def sender() -> None:
        try:
            start.wait()
            for user in users:
                answers.append(notices.notice_send(user=user, kind=KIND, key=f"race:{user.pk}", text="r"))
        finally:
            connection.close()

    threads = [threading.Thread(target=sender) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    keys = [f"race:{user.pk}" for user in users]
    assert sorted(key for key, _mobile in sms_backends.calls if key in keys) == sorted(keys)
    assert set(answers) <= {"sent", notices.BUSY} and answers.count("sent") >= len(users)
    assert Notice.objects.filter(key__in=keys, status=NoticeStatus.SENT).count() == len(users)


def test_the_settings_page_needs_a_login(client):
    response = client.get("/user/notifications")
    assert response.status_code == 302 and response["Location"].startswith("/user/index")


def test_the_settings_page_shows_every_kind_on_until_turned_off(client):
    user = make_user()
    client.force_login(user)
    page = client.get("/user/notifications").content.decode()
    assert page.count("checked") == len(NoticeKind) == 6
    form = {"sale_reminders": "on", "payment_reminders": "on", "shipping_news": "on"}
    response = client.post("/user/notifications", form)
    assert response.status_code == 302
    chosen = NoticeSettings.objects.get(user=user)
    assert (chosen.sale_reminders, chosen.draw_results, chosen.payment_reminders) == (True, False, True)
    assert (chosen.shipping_news, chosen.refund_answers, chosen.merchant_replies) == (True, False, False)
    assert client.get("/user/notifications").content.decode().count("checked") == 3
    assert not notices.notice_wanted(user=user, kind=NoticeKind.MERCHANT_REPLY)
    assert not notices.notice_wanted(user=user, kind=NoticeKind.DRAW_WON)
    assert not notices.notice_wanted(user=user, kind=NoticeKind.REFUND_ANSWER)


def test_the_settings_page_refuses_other_methods(client):
    client.force_login(make_user())
    assert client.put("/user/notifications").status_code == 405


def test_the_admin_lists_notices_to_read_only(client):
    user = make_user()
    notices.notice_send(user=user, kind=KIND, key=f"t:{user.pk}", text="hello")
    client.force_login(make_user(is_staff=True, is_superuser=True))
    listing = client.get("/admin/users/notice/")
    assert listing.status_code == 200 and f"t:{user.pk}" in listing.content.decode()
    assert client.get("/admin/users/notice/add/").status_code == 403
    merchant = make_user(is_staff=True)
    client.force_login(merchant)
    assert client.get("/admin/users/notice/").status_code == 403
