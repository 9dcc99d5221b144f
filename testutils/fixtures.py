"""Pytest fixtures every app's tests may use, registered by the root conftest.py
(pytest_plugins). Everything runs against real PostgreSQL and Redis; the burst tests add a real
Celery worker process that reads the test database."""

from datetime import timedelta

import pytest
from django.conf import settings
from django.contrib.auth.models import Group
from django.utils import timezone

from goods.models import Goods
from orders.fulfilment.services import order_deliver, order_ship, refund_request_open
from orders.services import REASON_SHOPPER, order_cancel
from sales import sale_state
from sales import services as sale_services
from sales.models import Sale, StockChange
from sales.services import stock_audit_record
from testutils.factories.orders import buy, pay
from testutils.factories.users import PASSWORD, make_user
from testutils.factories.waitingroom import make_room
from testutils.processes import celery_worker_running, gunicorn_running
from testutils.providers import DUMMY_PATH
from testutils.stores import redis_keys_delete
from users.addresses.services import address_create
from users.models import MERCHANTS_GROUP, User
from users.verification.services import registration_record
from waitingroom.services import room_settings_save, room_switch


@pytest.fixture(autouse=True)
def clean_redis():
    """Each test starts with none of this run's keys (sessions, counters, rate limits: all under
    its REDIS_KEY_PREFIX) and empty per-process marks. Other keys on the server, the broker's
    among them, are left alone: the server may be a shared one, or a cluster."""
    redis_keys_delete(settings.REDIS_KEY_PREFIX)
    sale_state.process_marks_clear()
    yield


@pytest.fixture(autouse=True)
def default_language():
    """Each test starts in the default language. A request in Chinese (a language cookie) leaves
    Chinese active in the thread after it (LocaleMiddleware activates, nothing deactivates),
    and a later test calling a service directly would get its messages in Chinese."""
    from django.utils import translation

    translation.activate(settings.LANGUAGE_CODE)
    yield
    translation.activate(settings.LANGUAGE_CODE)


@pytest.fixture
def ratelimit_clock(monkeypatch):
    """django-ratelimit's windows are fixed, each key's with its own boundary: a test whose
    dozen requests straddle one would see its count restart. Hold its clock still."""
    import time
    import types

    from django_ratelimit import core

    now = time.time()
    monkeypatch.setattr(core, "time", types.SimpleNamespace(time=lambda: now))


@pytest.fixture
def published(monkeypatch):
    """Record the tasks services publish by name (seckill_site.publish) instead of sending them,
    as (name, kwargs) pairs: the test decides when, and how often, each is run."""
    from celery_app import app

    sent = []
    monkeypatch.setattr(app, "send_task", lambda name, kwargs=None, **options: sent.append((name, kwargs)))
    return sent


@pytest.fixture
def flushes(monkeypatch):
    """Record the sale ids of the order writer's flushes instead of publishing them (other
    tasks published meanwhile are dropped)."""
    from celery_app import app
    from seckill.services.writer import ORDER_FLUSH

    sent = []

    def send_task(name, kwargs=None, **options):
        if name == ORDER_FLUSH:
            sent.append(kwargs["sale_id"])

    monkeypatch.setattr(app, "send_task", send_task)
    return sent


@pytest.fixture(autouse=True)
def media_root(tmp_path, settings):
    settings.MEDIA_ROOT = str(tmp_path / "media")


@pytest.fixture(scope="session")
def celery_worker(django_db_setup, django_db_blocker):
    """A real `celery worker` process (prefork, two children) on the test database and queue."""
    with celery_worker_running() as process:
        yield process


@pytest.fixture
def gunicorn_server(django_db_setup):
    with gunicorn_running() as url:
        yield url


@pytest.fixture
def shop(django_capture_on_commit_callbacks):
    """A Chinese shop: a merchant, goods, a sale on now with paid (shipped to a Chinese
    address), unpaid and cancelled orders, every kind of stock log note, and a waiting room
    with its log; a sale not started and one ended; a second goods without sales; a
    registration in the last hour."""
    merchants, _created = Group.objects.get_or_create(name=MERCHANTS_GROUP)
    merchant = User.objects.create_user("13900000009", PASSWORD, nickname="茶庄老板", is_staff=True)
    merchants.user_set.add(merchant)
    goods = Goods.objects.create(owner=merchant, name="龙井茶", title="明前龙井 250 克", price="368.00", stock=30)
    spare = Goods.objects.create(owner=merchant, name="白茶", title="福鼎白茶", price="128.00", stock=5)
    now = timezone.now()
    with django_capture_on_commit_callbacks(execute=True):
        sale = sale_services.sale_create(
            sale=Sale(
                goods=goods,
                seckill_price="9.90",
                stock_count=20,
                start_at=now - timedelta(minutes=5),
                end_at=now + timedelta(hours=2),
            ),
            actor=merchant,
        )
        later = sale_services.sale_create(
            sale=Sale(
                goods=goods,
                seckill_price="19.90",
                stock_count=5,
                start_at=now + timedelta(days=1),
                end_at=now + timedelta(days=1, hours=1),
            ),
            actor=merchant,
        )
        sale_services.sale_create(
            sale=Sale(
                goods=goods,
                seckill_price="29.90",
                stock_count=5,
                start_at=now - timedelta(days=2),
                end_at=now - timedelta(days=1),
            ),
            actor=merchant,
        )
    buyers = [make_user(nickname=f"买家{n}") for n in range(3)]
    paid, unpaid, cancelled = (buy(sale=sale, user=buyer) for buyer in buyers)
    address = address_create(
        user=buyers[0],
        recipient="张三",
        phone="13712345678",
        region="浙江省",
        city="杭州市",
        street="西湖区文三路 100 号",
        postcode="310000",
    )
    pay(paid, address)
    # After the payment: one order shipped and delivered, one whose buyer asks for a refund.
    delivered, asked = (pay(buy(sale=sale, user=make_user(nickname=f"买家{n}"))) for n in (3, 4))
    order_ship(order_id=delivered.pk, carrier="zto", tracking_no="73100012345678", actor_id=merchant.pk)
    order_deliver(order_id=delivered.pk, actor_id=delivered.user_id)
    refund_request_open(order_id=asked.pk, reason="拍错了", actor_id=asked.user_id)
    with django_capture_on_commit_callbacks(execute=True):
        order_cancel(order_id=cancelled.pk, reason=REASON_SHOPPER, actor_id=buyers[2].pk)
    # The details other writers leave (the batch writer, the reconciler, one that found Redis empty).
    stock_audit_record(sale_id=sale.pk, delta=0, reason=StockChange.PURCHASE, detail={"orders": 12})
    repair = {"stock_before": 5, "stock_after": 4, "buyers_before": 1, "buyers_after": 2}
    stock_audit_record(sale_id=sale.pk, delta=0, reason=StockChange.RECONCILE_REPAIR, detail=repair)
    stock_audit_record(
        sale_id=sale.pk, delta=0, reason=StockChange.RECONCILE_REPAIR, detail={**repair, "stock_before": None}
    )
    # The sale on now has a waiting room, with a switch thrown and its settings changed once.
    with django_capture_on_commit_callbacks(execute=True):
        room = make_room(sale=sale, admit_per_minute=120, active_shoppers=50)
        room.pass_minutes = 15
        room_settings_save(room=room, actor=merchant)
        room_switch(sale=sale, switch="stop", on=True, actor=merchant)
    registration_record(ip="203.0.113.9")
    return {
        "merchant": merchant,
        "goods": goods,
        "spare": spare,
        "sale": sale,
        "later": later,
        "paid": paid,
        "unpaid": unpaid,
        "delivered": delivered,
        "asked": asked,
        "audit": sale.stock_audit.order_by("pk").first(),
        "room": room,
    }


@pytest.fixture
def dummy(settings):
    """The dummy provider registered as "dummy" (orders.payments.providers.dummy) and on, its
    records empty: the test plays the provider's side through the gateway this returns."""
    from orders.payments.providers.dummy import gateway

    settings.PAYMENT_PROVIDERS = {**settings.PAYMENT_PROVIDERS, "dummy": DUMMY_PATH}
    gateway.reset()
    yield gateway
    gateway.reset()
