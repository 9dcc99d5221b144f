"""The texts after the payment (orders.fulfilment.notices): the order shipped, with its carrier
and tracking number, the refund request approved or declined, the return approved (with the
address to send it to) or declined, and the refund after the parcel came back; each once, in
the shopper's language, and not to a shopper who turned the kind off."""

from datetime import timedelta

import pytest
from django.utils import timezone

from orders.fulfilment import notices
from orders.fulfilment.returns import (
    return_parcel_received,
    return_parcel_sent,
    return_request_approve,
    return_request_decline,
    return_request_open,
)
from orders.fulfilment.services import (
    order_ship,
    refund_request_approve,
    refund_request_decline,
    refund_request_open,
)
from orders.models import Order, Shipment
from testutils import sms_backends
from testutils.factories.orders import buy, pay
from testutils.factories.sales import make_sale
from testutils.factories.users import make_user
from users import sms
from users.models import Notice, NoticeSettings, NoticeStatus, User


def texts_to(mobile: str) -> list[str]:
    return [message["text"] for message in sms.outbox if message["mobile"] == mobile]


def _paid(user: User | None = None, sale=None) -> Order:
    return pay(buy(sale=sale or make_sale(), user=user or make_user()))


@pytest.mark.django_db
def test_a_shipped_order_is_texted_once_with_its_carrier_and_tracking_number():
    order = _paid()
    order_ship(order_id=order.pk, carrier="sf", tracking_no="sf 1234 5678", actor_id=None)
    assert notices.order_news_send() == 1
    assert notices.order_news_send() == 0
    [text] = texts_to(order.user.mobile)
    assert "SF Express" in text and "SF12345678" in text and order.goods_name in text
    assert f"/orders/{order.order_no}" in text
    assert Notice.objects.get(key=notices.shipped_key(order.order_no)).kind == "order-shipped"


@pytest.mark.django_db
def test_a_refund_approved_and_one_declined_are_each_texted_once():
    approved, declined = _paid(), _paid()
    request = refund_request_open(order_id=approved.pk, reason="ordered twice", actor_id=approved.user_id)
    refund_request_approve(order_id=approved.pk, request_id=request.pk, actor_id=None)
    other = refund_request_open(order_id=declined.pk, reason="changed my mind", actor_id=declined.user_id)
    refund_request_decline(order_id=declined.pk, request_id=other.pk, answer="It is made to order", actor_id=None)
    assert notices.order_news_send() == 2
    assert notices.order_news_send() == 0
    [yes], [no] = texts_to(approved.user.mobile), texts_to(declined.user.mobile)
    assert "approved" in yes and f"/orders/{approved.order_no}" in yes
    assert "declined" in no and "It is made to order" in no


@pytest.mark.django_db
def test_an_open_request_and_old_news_are_not_texted():
    waiting, old = _paid(), _paid()
    refund_request_open(order_id=waiting.pk, reason="wrong colour", actor_id=waiting.user_id)
    order_ship(order_id=old.pk, carrier="jd", tracking_no="JD1", actor_id=None)
    Shipment.objects.filter(pk=old.pk).update(shipped_at=timezone.now() - timedelta(days=2))
    assert notices.order_news_send() == 0
    assert texts_to(waiting.user.mobile) == [] and texts_to(old.user.mobile) == []


@pytest.mark.django_db
def test_each_kind_can_be_turned_off_on_the_settings_page(client):
    shopper = make_user()
    client.force_login(shopper)
    page = client.get("/user/notifications").content.decode()
    assert 'name="shipping_news"' in page and 'name="refund_answers"' in page
    form = {"sale_reminders": "on", "draw_results": "on", "payment_reminders": "on", "refund_answers": "on"}
    assert client.post("/user/notifications", form).status_code == 302
    chosen = NoticeSettings.objects.get(user=shopper)
    assert (chosen.shipping_news, chosen.refund_answers) == (False, True)

    shipped, refunded = _paid(shopper), _paid(shopper)
    order_ship(order_id=shipped.pk, carrier="ems", tracking_no="EMS9", actor_id=None)
    request = refund_request_open(order_id=refunded.pk, reason="ordered twice", actor_id=shopper.pk)
    refund_request_decline(order_id=refunded.pk, request_id=request.pk, answer="no", actor_id=None)
    assert notices.order_news_send() == 1
    [text] = texts_to(shopper.mobile)
    assert "declined" in text
    assert Notice.objects.get(key=notices.shipped_key(shipped.order_no)).status == NoticeStatus.SKIPPED


@pytest.mark.django_db
def test_each_shopper_is_texted_in_their_language():
    chinese = make_user()
    User.objects.filter(pk=chinese.pk).update(language="zh-hans")
    chinese.refresh_from_db()
    shipped, declined = _paid(chinese), _paid(chinese)
    order_ship(order_id=shipped.pk, carrier="sf", tracking_no="SF7", actor_id=None)
    request = refund_request_open(order_id=declined.pk, reason="太贵", actor_id=chinese.pk)
    refund_request_decline(order_id=declined.pk, request_id=request.pk, answer="定制商品", actor_id=None)
    assert notices.order_news_send() == 2
    texts = texts_to(chinese.mobile)
    assert any("顺丰速运" in text and "SF7" in text and "发货" in text for text in texts)
    assert any("拒绝" in text and "定制商品" in text for text in texts)


@pytest.mark.django_db(transaction=True)
def test_two_sweeps_racing_text_each_news_once(settings):
    settings.SMS_BACKEND = "testutils.sms_backends.CountingSmsBackend"
    sale = make_sale()
    orders = [_paid(sale=sale) for _ in range(4)]
    for index, order in enumerate(orders):
        order_ship(order_id=order.pk, carrier="zto", tracking_no=f"ZTO{index}", actor_id=None)
    asked = _paid(sale=sale)
    request = refund_request_open(order_id=asked.pk, reason="wrong size", actor_id=asked.user_id)
    refund_request_decline(order_id=asked.pk, request_id=request.pk, answer="no", actor_id=None)
    sms_backends.sweeps_race(notices.order_news_send)
    keys = {notices.shipped_key(order.order_no) for order in orders} | {notices.refund_answer_key(request.pk)}
    assert sorted(key for key, _mobile in sms_backends.calls if key in keys) == sorted(keys)


def _shipped_and_returning(user: User | None = None) -> tuple[Order, int]:
    """A shipped order whose shopper asked to send it back, the texts of its shipping sent."""
    order = _paid(user)
    order_ship(order_id=order.pk, carrier="sf", tracking_no=f"SF{order.pk}", actor_id=None)
    notices.order_news_send()
    sms.outbox.clear()
    request = return_request_open(order_id=order.pk, reason="cracked", actor_id=order.user_id)
    return order, request.pk


@pytest.mark.django_db
def test_a_return_approved_then_refunded_and_one_declined_are_each_texted_once():
    approved, approved_id = _shipped_and_returning()
    declined, declined_id = _shipped_and_returning()
    return_request_approve(
        order_id=approved.pk, request_id=approved_id, return_address="Mia, 1 Dock Rd, Ningbo", actor_id=None
    )
    return_request_decline(order_id=declined.pk, request_id=declined_id, answer="Worn twice", actor_id=None)
    # The parcel went back and arrived before the sweep came: both texts still go, in order.
    return_parcel_sent(order_id=approved.pk, carrier="yto", tracking_no="YT1", actor_id=None)
    return_parcel_received(order_id=approved.pk, request_id=approved_id, actor_id=None)
    assert notices.order_news_send() == 3
    assert notices.order_news_send() == 0
    yes, refunded = texts_to(approved.user.mobile)
    [no] = texts_to(declined.user.mobile)
    assert "approved the return" in yes and "Mia, 1 Dock Rd, Ningbo" in yes and approved.order_no in yes
    assert "refunded" in refunded and f"¥{approved.price}" in refunded
    assert "declined the return" in no and "Worn twice" in no
    assert Notice.objects.get(key=notices.return_answer_key(approved_id)).kind == "refund-answer"
    assert Notice.objects.filter(key=notices.return_refunded_key(approved_id)).exists()


@pytest.mark.django_db
def test_return_texts_are_in_the_shoppers_language_and_follow_the_refund_answers_setting():
    chinese = make_user()
    User.objects.filter(pk=chinese.pk).update(language="zh-hans")
    chinese.refresh_from_db()
    order, request_id = _shipped_and_returning(chinese)
    quiet, quiet_id = _shipped_and_returning()
    return_request_approve(order_id=order.pk, request_id=request_id, return_address="宁波市 码头路1号", actor_id=None)
    NoticeSettings.objects.create(user=quiet.user, refund_answers=False)
    return_request_decline(order_id=quiet.pk, request_id=quiet_id, answer="no", actor_id=None)
    assert notices.order_news_send() == 1
    [text] = texts_to(chinese.mobile)
    assert "已同意" in text and "退货" in text and "宁波市 码头路1号" in text
    assert texts_to(quiet.user.mobile) == []
