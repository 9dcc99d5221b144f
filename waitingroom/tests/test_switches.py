"""The operator's switches, per sale and shop-wide, in the admin: each thrown is logged once and
reaches every web node within a second; the shop-wide ones are a superuser's alone."""

import os
import subprocess
import sys
import time

import pytest
from django.conf import settings

from testutils.factories.goods import make_goods
from testutils.factories.sales import make_sale
from testutils.factories.users import PASSWORD, make_merchant
from testutils.factories.waitingroom import make_room
from users.models import User
from waitingroom.models import RoomAction, ShopSwitches, WaitingRoomAction
from waitingroom.room import ROOM_SECONDS, room_forget, room_read

pytestmark = pytest.mark.django_db


@pytest.fixture
def room(django_capture_on_commit_callbacks):
    merchant = make_merchant(nickname="A")
    sale = make_sale(goods=make_goods(owner=merchant, name="A-Tea"))
    with django_capture_on_commit_callbacks(execute=True):
        return merchant, make_room(sale=sale)


def _act(client, capture, action: str, *pks: int, page: str = "/admin/waitingroom/waitingroom/"):
    with capture(execute=True):
        response = client.post(page, {"action": action, "_selected_action": list(pks)}, follow=True)
    assert response.status_code == 200
    return response.content.decode()


@pytest.mark.parametrize(
    ("on", "off", "field", "switch", "actions"),
    [
        (
            "queue_all_on",
            "queue_all_off",
            "queue_all",
            "queue_all",
            [RoomAction.QUEUE_ALL_ON, RoomAction.QUEUE_ALL_OFF],
        ),
        ("stop_on", "stop_off", "stop_admitting", "stop", [RoomAction.STOP_ON, RoomAction.STOP_OFF]),
    ],
)
def test_each_sale_switch_thrown_is_logged_once_and_published(
    client, room, django_capture_on_commit_callbacks, on, off, field, switch, actions
):
    merchant, wr = room
    client.force_login(merchant)
    page = _act(client, django_capture_on_commit_callbacks, on, wr.pk)
    assert "in 1 waiting room." in page
    _act(client, django_capture_on_commit_callbacks, on, wr.pk)  # thrown again: no change, no log
    wr.refresh_from_db()
    assert getattr(wr, field) is True
    assert getattr(room_read(wr.sale_id), switch) is True
    _act(client, django_capture_on_commit_callbacks, off, wr.pk)
    logged = list(WaitingRoomAction.objects.order_by("pk").values_list("action", "actor", "old", "new"))
    assert logged[1:] == [
        (actions[0], merchant.pk, {switch: False}, {switch: True}),
        (actions[1], merchant.pk, {switch: True}, {switch: False}),
    ]
    room_forget()
    assert getattr(room_read(wr.sale_id), switch) is False


def test_the_rooms_page_has_a_button_for_each_switch_logged_once_and_the_merchants_alone(
    client, room, django_capture_on_commit_callbacks
):
    merchant, wr = room
    client.force_login(merchant)
    page = f"/admin/waitingroom/waitingroom/{wr.pk}/change/"
    stop = f"/admin/waitingroom/waitingroom/{wr.pk}/switch/stop/on/"
    shown = client.get(page).content.decode()
    assert "Queue everyone now" in shown and "Stop admitting" in shown and stop in shown
    assert client.get(stop).status_code == 405
    for _twice in range(2):
        with django_capture_on_commit_callbacks(execute=True):
            response = client.post(stop, follow=True)
    assert response.redirect_chain[-1][0] == page
    assert "already in that position" in response.content.decode() and "Resume admitting" in response.content.decode()
    assert room_read(wr.sale_id).stop
    assert list(WaitingRoomAction.objects.exclude(action=RoomAction.CREATED).values_list("action", flat=True)) == [
        RoomAction.STOP_ON
    ]
    other = make_merchant(nickname="B")
    client.force_login(other)
    with django_capture_on_commit_callbacks(execute=True):
        assert client.post(f"/admin/waitingroom/waitingroom/{wr.pk}/switch/queue_all/on/").status_code == 404
    assert not room_read(wr.sale_id).queue_all


def test_the_shop_wide_switches_are_a_superusers_logged_once_and_reach_every_room(
    client, room, django_capture_on_commit_callbacks
):
    merchant, wr = room
    other = make_sale()
    with django_capture_on_commit_callbacks(execute=True):
        make_room(sale=other)
    client.force_login(merchant)
    assert client.get("/admin/waitingroom/shopswitches/").status_code == 403
    assert b"shopswitches" not in client.get("/admin/").content
    admin = User.objects.create_superuser("13800000077", PASSWORD, nickname="root")
    client.force_login(admin)
    page = "/admin/waitingroom/shopswitches/"
    assert client.get(page).status_code == 200
    for _twice in range(2):
        _act(client, django_capture_on_commit_callbacks, "stop_on", ShopSwitches.ROW, page=page)
    assert room_read(wr.sale_id).stop and room_read(other.pk).stop
    assert not room_read(wr.sale_id).queue_all
    logged = WaitingRoomAction.objects.filter(sale=None)
    assert list(logged.values_list("action", "actor")) == [(RoomAction.STOP_ON, admin.pk)]
    _act(client, django_capture_on_commit_callbacks, "stop_off", ShopSwitches.ROW, page=page)
    room_forget()
    assert not room_read(wr.sale_id).stop
    # The merchant's log shows their sales' changes, never the shop's.
    client.force_login(merchant)
    assert "every sale" not in client.get("/admin/waitingroom/waitingroomaction/").content.decode()


WATCHER = """
import os, sys, time
import django
django.setup()
from waitingroom.room import room_read
sale = int(sys.argv[1])
assert not room_read(sale).queue_all
print("ready", flush=True)
deadline = time.time() + 10
while not room_read(sale).queue_all and time.time() < deadline:
    time.sleep(0.005)
print(time.time(), flush=True)
"""


@pytest.mark.processes
def test_queue_everyone_reaches_another_process_within_a_second(client, room, django_capture_on_commit_callbacks):
    """Another web node holds its copy of the room (read a moment ago) and must see the switch
    within ROOM_SECONDS: its copy is never older."""
    merchant, wr = room
    env = {**os.environ, "DJANGO_SETTINGS_MODULE": "seckill_site.settings.test"}
    assert env["REDIS_KEY_PREFIX"] == settings.REDIS_KEY_PREFIX
    watcher = subprocess.Popen(
        [sys.executable, "-c", WATCHER, str(wr.sale_id)],
        stdout=subprocess.PIPE,
        text=True,
        env=env,
        cwd=settings.BASE_DIR,
    )
    try:
        assert watcher.stdout.readline().strip() == "ready"
        client.force_login(merchant)
        thrown = time.time()
        _act(client, django_capture_on_commit_callbacks, "queue_all_on", wr.pk)
        seen = float(watcher.stdout.readline())
    finally:
        watcher.kill()
        watcher.wait()
    assert seen - thrown < ROOM_SECONDS + 0.2
