"""The warning before an unpaid order expires (orders.notices): texted once, a few minutes
before the deadline, never for a paid order or after the deadline."""

from datetime import timedelta

import pytest
from django.utils import timezone

from orders import notices
from orders.models import Order, OrderStatus
from testutils import sms_backends
from testutils.factories.orders import make_order
from testutils.factories.sales import make_sale
from testutils.factories.users import PASSWORD, make_user
from users import sms
from users.models import Notice, NoticeSettings, NoticeStatus


def texts_to(mobile: str) -> list[str]:
    return [message["text"] for message in sms.outbox if message["mobile"] == mobile]


def order_due_in(seconds: int, sale=None, **fields) -> Order:
    order = make_order(sale=sale or make_sale(), **fields)
    Order.objects.filter(pk=order.pk).update(pay_deadline=timezone.now() + timedelta(seconds=seconds))
    return order


@pytest.mark.django_db
def test_the_buyer_of_an_order_about_to_expire_is_warned_once(settings):
    settings.PAY_REMINDER_LEAD_SECONDS = 300
    due, later, past = order_due_in(200), order_due_in(600), order_due_in(-10)
    paid = order_due_in(200, status=OrderStatus.PAID)
    quiet = order_due_in(200)
    NoticeSettings.objects.create(user=quiet.user, payment_reminders=False)
    assert notices.pay_reminders_send() == 1
    assert notices.pay_reminders_send() == 0
    [text] = texts_to(due.user.mobile)
    assert due.goods_name in text and f"/orders/{due.order_no}" in text
    for order in (later, past, paid, quiet):
        assert texts_to(order.user.mobile) == []
    assert Notice.objects.get(key=f"pay-reminder:{quiet.order_no}").status == NoticeStatus.SKIPPED


@pytest.mark.django_db
def test_each_buyer_is_warned_in_their_language(client, settings):
    """The language of the page they first logged in from, until they choose on their settings."""
    settings.PAY_REMINDER_LEAD_SECONDS = 300
    chinese, english = make_user(), make_user()
    client.cookies["django_language"] = "zh-hans"
    assert client.post("/user/login", {"mobile": chinese.mobile, "password": PASSWORD}).status_code == 302
    client.logout()
    client.cookies["django_language"] = "en"
    assert client.post("/user/login", {"mobile": english.mobile, "password": PASSWORD}).status_code == 302
    orders = [order_due_in(200, user=user) for user in (chinese, english)]
    assert notices.pay_reminders_send() == 2
    [in_chinese], [in_english] = texts_to(chinese.mobile), texts_to(english.mobile)
    assert "订单" in in_chinese and orders[0].order_no in in_chinese
    assert in_english.startswith("Your order for")

    form = {"sale_reminders": "on", "draw_results": "on", "payment_reminders": "on", "language": "en"}
    client.force_login(chinese)
    assert client.post("/user/notifications", form).status_code == 302
    chinese.refresh_from_db()
    assert chinese.language == "en"
    assert client.post("/user/notifications", {**form, "language": "fr"}).status_code == 400
    chinese.refresh_from_db()
    assert chinese.language == "en"


@pytest.mark.django_db(transaction=True)
def test_two_sweeps_racing_warn_each_buyer_once(settings):
    settings.SMS_BACKEND = "testutils.sms_backends.CountingSmsBackend"
    settings.PAY_REMINDER_LEAD_SECONDS = 300
    sale = make_sale()
    orders = [order_due_in(120, sale=sale, user=make_user()) for _ in range(5)]
    sms_backends.sweeps_race(notices.pay_reminders_send)
    keys = {notices.notice_key(order.order_no) for order in orders}
    assert sorted(key for key, _mobile in sms_backends.calls if key in keys) == sorted(keys)
