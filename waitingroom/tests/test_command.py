"""`manage.py waiting_room`: the operator's switches from a shell, logged under the OS user, and
a clear refusal for a sale it cannot act on; `waiting_rooms_publish` after a Redis loss."""

import getpass
from io import StringIO

import pytest
from django.core.management import CommandError, call_command

from seckill_site import redis as shop_redis
from testutils.factories.sales import make_sale
from testutils.factories.waitingroom import make_room
from waitingroom import keys
from waitingroom.models import RoomAction, WaitingRoomAction
from waitingroom.room import OFF, room_forget, room_read

pytestmark = pytest.mark.django_db


def _run(capture, *args) -> str:
    out = StringIO()
    with capture(execute=True):
        call_command("waiting_room", *args, stdout=out)
    room_forget()
    return out.getvalue()


def test_a_sales_switches_are_thrown_once_and_logged_under_the_os_user(django_capture_on_commit_callbacks):
    sale = make_sale()
    with django_capture_on_commit_callbacks(execute=True):
        make_room(sale=sale)
    said = _run(django_capture_on_commit_callbacks, "--sale", str(sale.pk), "--queue-all", "on", "--stop", "on")
    assert "queue_all on (logged)" in said and "stop on (logged)" in said
    assert room_read(sale.pk).queue_all and room_read(sale.pk).stop
    again = _run(django_capture_on_commit_callbacks, "--sale", str(sale.pk), "--queue-all", "on")
    assert "already" in again
    _run(django_capture_on_commit_callbacks, "--sale", str(sale.pk), "--queue-all", "off")
    assert not room_read(sale.pk).queue_all and room_read(sale.pk).stop
    logged = WaitingRoomAction.objects.exclude(action=RoomAction.CREATED).order_by("pk")
    assert list(logged.values_list("action", "actor_name")) == [
        (RoomAction.QUEUE_ALL_ON, f"operator:{getpass.getuser()}"),
        (RoomAction.STOP_ON, f"operator:{getpass.getuser()}"),
        (RoomAction.QUEUE_ALL_OFF, f"operator:{getpass.getuser()}"),
    ]


def test_the_shop_wide_switches_from_the_shell(django_capture_on_commit_callbacks):
    sale = make_sale()
    with django_capture_on_commit_callbacks(execute=True):
        make_room(sale=sale)
    said = _run(django_capture_on_commit_callbacks, "--shop", "--stop", "on", "--show")
    assert "shop-wide stop on (logged)" in said and "shop-wide: queue_all=0 stop=1" in said
    assert room_read(sale.pk).stop
    assert WaitingRoomAction.objects.filter(sale=None, action=RoomAction.STOP_ON).count() == 1


def test_show_prints_the_room_and_its_figures(django_capture_on_commit_callbacks):
    sale = make_sale()
    with django_capture_on_commit_callbacks(execute=True):
        make_room(sale=sale, active_shoppers=300)
    shown = _run(django_capture_on_commit_callbacks, "--sale", str(sale.pk), "--show")
    assert "admit/min 60, in at once 300, pass 10 min" in shown
    assert "waiting=0" in shown and "wait_p50=None" in shown
    assert not WaitingRoomAction.objects.exclude(action=RoomAction.CREATED).exists()


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--sale", "999999", "--stop", "on"], "no sale event with id 999999"),
        (["--sale", "{plain}", "--stop", "on"], "has no waiting room"),
        (["--stop", "on"], "one of the arguments --sale --shop is required"),
        (["--sale", "{plain}", "--shop"], "not allowed with argument"),
        (["--shop", "--stop", "maybe"], "invalid choice"),
    ],
)
def test_bad_input_is_refused_with_a_clear_message_and_changes_nothing(args, message):
    plain = make_sale()
    with pytest.raises(CommandError, match=message):
        call_command("waiting_room", *[a.format(plain=plain.pk) for a in args], stdout=StringIO())
    assert not WaitingRoomAction.objects.exists()


def test_publishing_again_restores_the_rooms_and_switches_redis_lost(django_capture_on_commit_callbacks):
    on, off = make_sale(), make_sale()
    with django_capture_on_commit_callbacks(execute=True):
        make_room(sale=on)
        make_room(sale=off, enabled=False)
    _run(django_capture_on_commit_callbacks, "--shop", "--queue-all", "on")
    published = room_read(on.pk)
    client = shop_redis.client()
    client.delete(keys.room(on.pk), keys.shop())
    room_forget()
    assert room_read(on.pk) == OFF
    out = StringIO()
    call_command("waiting_rooms_publish", stdout=out)
    assert "1 waiting room(s) on" in out.getvalue()
    room_forget()
    assert room_read(on.pk) == published and published.queue_all
    assert room_read(off.pk) == OFF


def test_warming_a_sale_restores_its_room(django_capture_on_commit_callbacks):
    sale = make_sale()
    with django_capture_on_commit_callbacks(execute=True):
        make_room(sale=sale)
    published = room_read(sale.pk)
    shop_redis.client().delete(keys.room(sale.pk))
    room_forget()
    call_command("seckill_warm", "--sale", str(sale.pk), "--captchas", "0", stdout=StringIO())
    room_forget()
    assert room_read(sale.pk) == published
