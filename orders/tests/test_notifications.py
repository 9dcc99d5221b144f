"""The providers' notifications, as their stand-ins really send them: verified, applied once,
refused with a 4xx and no change when forged, replayed or tampered, and a payment that lands
after its order closed refunded in full."""

import json
import random
import threading
import urllib.parse
from concurrent.futures import ThreadPoolExecutor
from datetime import timedelta
from pathlib import Path

import pytest
from django.conf import settings
from django.http import QueryDict
from django.test import Client
from django.utils import timezone

from orders.models import Order, Payment, PaymentNotice, PaymentStatus, Refund, RefundStatus
from orders.payments.closing import orders_expire_unpaid
from orders.payments.providers.stripe import client as stripe_client
from orders.payments.reconcile import money_check
from orders.payments.refunds import refund_send
from orders.payments.services import payment_card_confirm, payment_start
from testutils.factories.orders import buy
from testutils.factories.sales import make_sale
from testutils.factories.users import make_address, make_user
from testutils.providers import Receiver, alipay_buyer_pays, alipay_cashier_open, stripe_card_token
from tools.payment_services import alipay_control

pytestmark = pytest.mark.django_db
FORM = "application/x-www-form-urlencoded"


@pytest.fixture
def receiver():
    made = Receiver()
    yield made
    made.close()


def _alipay_attempt(receiver: Receiver, **order_fields):
    me = make_user()
    order = buy(sale=make_sale(), user=me)
    if order_fields:
        Order.objects.filter(pk=order.pk).update(**order_fields)
        order.refresh_from_db()
    payment, checkout = payment_start(
        order=order,
        provider_name="alipay",
        address=make_address(me),
        return_url="http://shop.test/return",
        notify_url=receiver.url,
    )
    alipay_cashier_open(checkout.redirect_url)
    return order, payment


def _post(body: bytes, client: Client | None = None):
    return (client or Client()).post("/payments/alipay/notify", body, content_type=FORM)


def _signed(body: bytes) -> list:
    """The fields Alipay signs (every one but sign and sign_type), as Django reads a form."""
    return sorted((name, values) for name, values in QueryDict(body).lists() if name not in ("sign", "sign_type"))


def _changed(body: bytes, **fields: str) -> bytes:
    form = dict(urllib.parse.parse_qsl(body.decode()))
    form.update(fields)
    return urllib.parse.urlencode(form).encode()


def test_alipays_notify_pays_the_order_once(receiver):
    order, payment = _alipay_attempt(receiver)
    alipay_buyer_pays(payment.trade_no)
    notify = receiver.wait()
    answer = _post(notify)
    assert (answer.status_code, answer.content) == (200, b"success")
    order.refresh_from_db()
    assert order.status == "paid" and Payment.objects.get(pk=payment.pk).status == PaymentStatus.SUCCEEDED
    again = _post(notify)
    assert (again.status_code, again.content) == (200, b"success")  # the same answer
    assert PaymentNotice.objects.count() == 1 and money_check() == []


@pytest.mark.parametrize(
    "tamper",
    [
        {"total_amount": "0.01"},  # amount, signature left as it was
        {"out_trade_no": "20260101000000000000000101"},
        {"trade_status": "TRADE_SUCCESS", "app_id": "2021000000000999"},
        {"sign": "AAAA"},
        {"sign": ""},
        {"sign_type": "RSA"},
    ],
)
def test_a_tampered_notify_is_refused_and_changes_nothing(receiver, tamper):
    order, payment = _alipay_attempt(receiver)
    alipay_buyer_pays(payment.trade_no)
    answer = _post(_changed(receiver.wait(), **tamper))
    assert answer.status_code == 400
    assert Order.objects.get(pk=order.pk).status == "unpaid" and not PaymentNotice.objects.exists()


def test_a_notify_that_repeats_a_field_is_refused(receiver):
    """Django would read the last of two values, a verifier might read the first."""
    order, payment = _alipay_attempt(receiver)
    alipay_buyer_pays(payment.trade_no)
    answer = _post(receiver.wait() + b"&total_amount=0.01")
    assert (answer.status_code, answer.content) == (400, b"refused: malformed")
    assert Order.objects.get(pk=order.pk).status == "unpaid" and not PaymentNotice.objects.exists()


def test_a_signed_notify_for_another_amount_is_refused(receiver):
    """Signed with Alipay's key (the stand-in's), but not the amount we asked for."""
    from tools.alipay_gateway import keys, signing

    order, payment = _alipay_attempt(receiver)
    alipay_buyer_pays(payment.trade_no)
    form = dict(urllib.parse.parse_qsl(receiver.wait().decode()))
    form.pop("sign")
    form["total_amount"] = "0.01"
    pair = keys.ensure(Path(settings.ALIPAY_PUBLIC_KEY).parent)
    resigned = signing.signed_callback(form, pair.alipay_private)
    answer = _post(urllib.parse.urlencode(resigned).encode())
    assert answer.status_code == 400 and b"amount" in answer.content
    assert Order.objects.get(pk=order.pk).status == "unpaid"


def test_a_thousand_forged_notifications_change_nothing(receiver):
    order, payment = _alipay_attempt(receiver)
    alipay_buyer_pays(payment.trade_no)
    real = receiver.wait()
    fields = dict(urllib.parse.parse_qsl(real.decode()))
    genuine = _signed(real)
    rng = random.Random(36)
    client = Client()
    statuses = []
    for index in range(1000):
        kind = index % 5
        if kind == 0:  # truncated
            body = real[: rng.randrange(len(real))]
        elif kind == 1:  # one byte flipped
            at = rng.randrange(len(real))
            body = real[:at] + bytes([real[at] ^ rng.randrange(1, 255)]) + real[at + 1 :]
        elif kind == 2:  # a field dropped
            # Any but sign_type, which Alipay leaves out of what it signs: without it the
            # notify is still the genuine one.
            dropped = rng.choice([name for name in fields if name != "sign_type"])
            body = urllib.parse.urlencode({k: v for k, v in fields.items() if k != dropped}).encode()
        elif kind == 3:  # an amount or a status changed
            change = rng.choice(
                [{"total_amount": f"{rng.randrange(1, 99999) / 100:.2f}"}, {"trade_status": "TRADE_CLOSED"}]
            )
            body = _changed(real, **change)
        else:  # bytes
            body = rng.randbytes(rng.randrange(1, 400))
        if _signed(body) == genuine:
            # What Alipay signed is unchanged: only the signature was cut, or written another way
            # that decodes the same (an escape's hex digit in the other case, the low bits base64
            # ignores in its last character), which may well be the genuine notify still.
            continue
        statuses.append(_post(body, client).status_code)
    assert len(statuses) >= 700 and set(statuses) == {400}, {s: statuses.count(s) for s in set(statuses)}
    assert Order.objects.get(pk=order.pk).status == "unpaid" and not PaymentNotice.objects.exists()


@pytest.mark.django_db(transaction=True)
def test_the_same_notify_eight_times_at_once_is_applied_once(receiver):
    order, payment = _alipay_attempt(receiver)
    alipay_buyer_pays(payment.trade_no)
    notify = receiver.wait()
    barrier = threading.Barrier(8)

    def deliver(_):
        barrier.wait()
        return _post(notify)

    with ThreadPoolExecutor(8) as pool:
        answers = list(pool.map(deliver, range(8)))
    assert {(a.status_code, a.content) for a in answers} == {(200, b"success")}
    assert PaymentNotice.objects.count() == 1
    assert Order.objects.get(pk=order.pk).status == "paid" and money_check() == []


# The next two take the shared Alipay stand-in down for a moment: slow, so the fast lane's
# parallel workers never see each other's outage.
@pytest.mark.slow
def test_a_payment_after_the_order_was_released_is_refunded(receiver, published, django_capture_on_commit_callbacks):
    """The provider cannot be reached past the sale's hold, so the unit goes back unconfirmed;
    the buyer had paid meanwhile, and the notify that comes later is refunded in full."""
    order, payment = _alipay_attempt(receiver)
    alipay_control(settings.ALIPAY_GATEWAY, "notifications?hold=1")
    try:
        alipay_buyer_pays(payment.trade_no)
        alipay_control(settings.ALIPAY_GATEWAY, "outage?seconds=30")
        Order.objects.filter(pk=order.pk).update(pay_deadline=timezone.now() - timedelta(hours=2))
        assert orders_expire_unpaid() == 1  # past the 30-minute hold: released, unconfirmed
        closed = Payment.objects.get(pk=payment.pk)
        assert closed.status == PaymentStatus.CLOSED and not closed.close_confirmed
        assert Order.objects.get(pk=order.pk).status == "cancelled"
    finally:
        alipay_control(settings.ALIPAY_GATEWAY, "outage?seconds=0")
        alipay_control(settings.ALIPAY_GATEWAY, "notifications?hold=0")
    with django_capture_on_commit_callbacks(execute=True):
        answer = _post(receiver.wait())
    assert answer.content == b"success"
    refund = Refund.objects.get(payment=payment)
    assert refund.kind == "late" and refund.amount == payment.amount and refund.status == RefundStatus.PENDING
    assert ("orders.refund_send", {"refund_id": refund.pk}) in published
    assert refund_send(refund_id=refund.pk) is True
    assert Payment.objects.get(pk=payment.pk).status == PaymentStatus.REFUNDED
    assert Order.objects.get(pk=order.pk).status == "cancelled" and money_check() == []
    page = Client()
    page.force_login(order.user)
    assert "refunded" in page.get(f"/orders/{order.order_no}").content.decode()


@pytest.mark.slow
def test_while_alipay_is_down_an_expired_order_holds_its_unit(receiver):
    order, payment = _alipay_attempt(receiver)
    alipay_control(settings.ALIPAY_GATEWAY, "outage?seconds=30")
    try:
        Order.objects.filter(pk=order.pk).update(pay_deadline=timezone.now() - timedelta(seconds=1))
        assert orders_expire_unpaid() == 0
        assert Order.objects.get(pk=order.pk).status == "unpaid"
        assert Payment.objects.get(pk=payment.pk).close_tries == 1
    finally:
        alipay_control(settings.ALIPAY_GATEWAY, "outage?seconds=0")
    Payment.objects.filter(pk=payment.pk).update(close_next_at=None)  # the backoff's pause, skipped
    assert orders_expire_unpaid() == 1
    assert Payment.objects.get(pk=payment.pk).close_confirmed is True


def _stripe_attempt():
    me = make_user()
    order = buy(sale=make_sale(), user=me)
    payment, checkout = payment_start(
        order=order, provider_name="stripe", address=make_address(me), return_url="", notify_url=""
    )
    assert checkout.client_secret.startswith(payment.provider_ref)
    return order, payment


def test_a_card_pays_and_stripes_webhook_is_verified(settings):
    import stripe

    order, payment = _stripe_attempt()
    payment, secret = payment_card_confirm(payment=payment, token=stripe_card_token("4242424242424242"))
    assert payment.status == PaymentStatus.SUCCEEDED and not secret
    # The event Stripe made of it, as its webhook would carry it (every page of the list).
    listed = stripe_client().v1.events.list(params={"type": "payment_intent.succeeded", "limit": 100})
    event = next(e for e in listed.auto_paging_iter() if e.data.object.id == payment.provider_ref)
    payload = json.dumps(event.to_dict())
    stamp = int(timezone.now().timestamp())
    signature = stripe.WebhookSignature._compute_signature(f"{stamp}.{payload}", settings.STRIPE_WEBHOOK_SECRET)
    header = f"t={stamp},v1={signature}"
    answer = Client().post(
        "/payments/stripe/webhook", payload, content_type="application/json", HTTP_STRIPE_SIGNATURE=header
    )
    assert answer.status_code == 200, answer.content
    assert PaymentNotice.objects.get().outcome == "already"  # the card's own answer paid it first
    forged = Client().post(
        "/payments/stripe/webhook", payload.replace("succeeded", "succeeded "), content_type="application/json",
        HTTP_STRIPE_SIGNATURE=header,
    )  # fmt: skip
    assert forged.status_code == 400 and PaymentNotice.objects.count() == 1
    assert Order.objects.get(pk=order.pk).status == "paid" and money_check() == []


def test_a_declined_card_changes_nothing():
    from orders.payments.services import PaymentUnavailable

    order, payment = _stripe_attempt()
    with pytest.raises(PaymentUnavailable, match="declined"):
        payment_card_confirm(payment=payment, token=stripe_card_token("4000000000000341"))
    assert Order.objects.get(pk=order.pk).status == "unpaid"
    assert Payment.objects.get(pk=payment.pk).status == PaymentStatus.OPEN
