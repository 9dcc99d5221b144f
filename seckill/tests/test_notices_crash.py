"""A real Celery worker killed (SIGKILL) while it sends a message, before or after the provider
took it: the message's claim lapses, beat's sweep sends it again with the same key, and the
provider (FileSmsBackend, which drops a key it has seen, as a provider does with a client
reference) has it once. For each kind: a sale reminder, a draw's winner, a payment reminder,
an order shipped."""

import json
import os
import signal
import time
from datetime import timedelta
from pathlib import Path

import pytest
from django.conf import settings as django_settings
from django.utils import timezone

from celery_app import app
from orders import notices as order_notices
from orders.fulfilment import notices as fulfilment_notices
from orders.models import Order, OrderStatus, Shipment
from sales.models import SaleDraw, SaleReminder
from sales.reminders import services as reminders
from seckill.services import draw as draw_service
from seckill.services import draw_notices
from testutils.draws import enter_all, window_over
from testutils.factories.orders import make_order
from testutils.factories.sales import make_draw_sale, make_sale
from testutils.factories.users import make_user, make_users
from testutils.processes import celery_worker_running
from users.models import Notice, NoticeStatus

WORKER_NAME = "notices"
# The claim's lease in the test process: long enough that the first sweep finds it fresh.
LEASE_S = 3
BLOCK_BOUND_S = 60


@pytest.fixture(scope="module")
def blocking_worker(django_db_setup, tmp_path_factory):
    """A worker on a queue of its own whose text-message backend blocks mid-send; yields the
    folder with its provider file, its pid file and the mode file ("after": the provider takes
    the message before the block; "before": it does not)."""
    folder = tmp_path_factory.mktemp("sms")
    (folder / "mode").write_text("after")
    env = {
        "TEST_SMS_BACKEND": "testutils.sms_backends.BlockingFileSmsBackend",
        "SMS_FILE_PATH": str(folder / "provider.log"),
        "SMS_BLOCK_MODE": str(folder / "mode"),
        "SMS_BLOCK_PIDFILE": str(folder / "sender.pid"),
        "CELERY_TASK_DEFAULT_QUEUE": f"{django_settings.CELERY_TASK_DEFAULT_QUEUE}-{WORKER_NAME}",
    }
    with celery_worker_running(WORKER_NAME, **env):
        yield folder, env["CELERY_TASK_DEFAULT_QUEUE"]


def sale_reminder():
    sale, user = make_sale(starts_in=300), make_user()
    SaleReminder.objects.create(user=user, sale=sale)
    return "goods.sale_reminders_send", {}, f"sale-reminder:{sale.pk}:{user.pk}", reminders.sale_reminders_send


def draw_won(monkeypatch):
    sale = make_draw_sale(stock=1)
    enter_all(make_users(1), sale)
    window_over(sale)
    with monkeypatch.context() as patch:
        patch.setattr(app, "send_task", lambda *args, **kwargs: None)  # the test publishes to its worker
        assert draw_service.sale_draw(sale_id=sale.pk).state == "drawn"
    [winner] = SaleDraw.objects.get(sale=sale).winner_ids
    key = draw_notices.notice_key(sale.pk, winner)
    return "seckill.draw_winners_notify", {"sale_id": sale.pk}, key, draw_notices.draw_winners_sweep


def pay_reminder():
    order = make_order(sale=make_sale())
    Order.objects.filter(pk=order.pk).update(pay_deadline=timezone.now() + timedelta(seconds=120))
    return "orders.pay_reminders_send", {}, order_notices.notice_key(order.order_no), order_notices.pay_reminders_send


def order_shipped():
    order = make_order(sale=make_sale(), status=OrderStatus.SHIPPED)
    Shipment.objects.create(order=order, carrier="sf", tracking_no="SF1", shipped_at=timezone.now())
    key = fulfilment_notices.shipped_key(order.order_no)
    return "orders.order_news_send", {}, key, fulfilment_notices.order_news_send


def provider_keys(folder: Path) -> list[str]:
    path = folder / "provider.log"
    lines = path.read_text().splitlines() if path.exists() else []
    return [json.loads(line)["key"] for line in lines]


@pytest.mark.slow
@pytest.mark.processes
@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("mode", ["after", "before"])
@pytest.mark.parametrize("kind", ["sale-reminder", "draw-won", "pay-reminder", "order-shipped"])
def test_a_worker_killed_mid_send_leaves_the_message_to_the_sweep_and_the_provider_has_it_once(
    blocking_worker, settings, monkeypatch, kind, mode
):
    folder, queue = blocking_worker
    (folder / "mode").write_text(mode)
    (folder / "sender.pid").unlink(missing_ok=True)
    settings.SMS_SENDS_PER_HOUR = 10_000
    settings.SALE_REMINDER_LEAD_SECONDS = 600
    settings.PAY_REMINDER_LEAD_SECONDS = 300
    if kind == "sale-reminder":
        task, kwargs, key, sweep = sale_reminder()
    elif kind == "draw-won":
        task, kwargs, key, sweep = draw_won(monkeypatch)
    elif kind == "order-shipped":
        task, kwargs, key, sweep = order_shipped()
    else:
        task, kwargs, key, sweep = pay_reminder()

    app.send_task(task, kwargs=kwargs, queue=queue)
    deadline = time.monotonic() + BLOCK_BOUND_S
    while not (folder / "sender.pid").exists():
        assert time.monotonic() < deadline, "the worker never reached the provider; see .run/notices-worker.log"
        time.sleep(0.1)
    time.sleep(0.1)  # the pid is written whole before the sleep begins
    os.kill(int((folder / "sender.pid").read_text()), signal.SIGKILL)
    assert provider_keys(folder).count(key) == (1 if mode == "after" else 0)
    notice = Notice.objects.get(key=key)
    assert (notice.status, notice.tries) == (NoticeStatus.SENDING, 1)

    # Beat's sweep, here: the dead sender's claim holds until its lease is over, then lapses.
    settings.SMS_BACKEND = "users.sms.FileSmsBackend"
    settings.SMS_FILE_PATH = str(folder / "provider.log")
    settings.NOTICE_CLAIM_SECONDS = LEASE_S
    sweep()
    assert Notice.objects.get(key=key).status == NoticeStatus.SENDING
    time.sleep(max(0.0, LEASE_S + 0.2 - (timezone.now() - notice.claimed_at).total_seconds()))
    sweep()
    sweep()
    notice.refresh_from_db()
    assert (notice.status, notice.tries) == (NoticeStatus.SENT, 2)
    assert provider_keys(folder).count(key) == 1
