"""A draw's winners are texted once each (seckill.services.draw_notices), off the draw's path:
the draw publishes the task after it is applied, and stands whatever the broker says."""

import pytest
from kombu.exceptions import OperationalError

from sales.models import SaleDraw
from seckill.services import draw as draw_service
from seckill.services import draw_notices
from testutils import sms_backends
from testutils.draws import enter_all, window_over
from testutils.factories.sales import make_draw_sale
from testutils.factories.users import make_users
from users import sms
from users.models import Notice, NoticeSettings, NoticeStatus


def texts_to(mobile: str) -> list[str]:
    return [message["text"] for message in sms.outbox if message["mobile"] == mobile]


def drawn(stock: int, entrants: int):
    sale = make_draw_sale(stock=stock)
    users = make_users(entrants)
    enter_all(users, sale)
    window_over(sale)
    return sale, users


@pytest.mark.django_db
def test_the_draw_publishes_the_winners_message_after_it_is_applied(published, settings):
    settings.SECKILL_ORDER_TTL = 900
    sale, users = drawn(stock=2, entrants=4)
    assert draw_service.sale_draw(sale_id=sale.pk).state == "drawn"
    assert ("seckill.draw_winners_notify", {"sale_id": sale.pk}) in published
    assert SaleDraw.objects.get(sale=sale).applied_at is not None
    winners = set(SaleDraw.objects.get(sale=sale).winner_ids)
    NoticeSettings.objects.create(user_id=min(winners), draw_results=False)
    assert draw_notices.draw_winners_notify(sale_id=sale.pk) == 1
    assert draw_notices.draw_winners_notify(sale_id=sale.pk) == 0  # a redelivered task
    assert draw_notices.draw_winners_sweep() == 0
    for user in users:
        expected = 1 if user.pk in winners and user.pk != min(winners) else 0
        assert len(texts_to(user.mobile)) == expected
    text = texts_to(next(u for u in users if u.pk == max(winners)).mobile)[0]
    assert (
        text
        == f"You won the draw for {sale.goods.name}: pay within 15 minutes at http://127.0.0.1:8000/goods/detail/{sale.pk}"
    )
    assert Notice.objects.get(key=f"draw-won:{sale.pk}:{min(winners)}").status == NoticeStatus.SKIPPED


@pytest.mark.django_db
def test_a_broker_refusing_the_message_task_leaves_the_draw_whole_and_the_sweep_sends(monkeypatch):
    from celery_app import app

    def refuse(name, kwargs=None, **options):
        if name == "seckill.draw_winners_notify":
            raise OperationalError("broker down")

    monkeypatch.setattr(app, "send_task", refuse)
    sale, users = drawn(stock=2, entrants=3)
    report = draw_service.sale_draw(sale_id=sale.pk)
    assert (report.state, report.winners, report.applied) == ("drawn", 2, 2)
    assert draw_notices.draw_winners_sweep() == 2
    assert draw_notices.draw_winners_sweep() == 0
    assert sum(len(texts_to(user.mobile)) for user in users) == 2


@pytest.mark.django_db(transaction=True)
def test_two_sweeps_racing_text_each_winner_once(settings, flushes):
    settings.SMS_BACKEND = "testutils.sms_backends.CountingSmsBackend"
    sale, _users = drawn(stock=4, entrants=6)
    draw_service.sale_draw(sale_id=sale.pk)
    sms_backends.sweeps_race(draw_notices.draw_winners_sweep)
    keys = {draw_notices.notice_key(sale.pk, user_id) for user_id in SaleDraw.objects.get(sale=sale).winner_ids}
    assert len(keys) == 4
    assert sorted(key for key, _mobile in sms_backends.calls if key in keys) == sorted(keys)
