"""A room's settings in the admin: refused with the merchant's words and nothing changed, saved,
logged and published to every web node once committed; a merchant sees only their own rooms."""

from datetime import timedelta

import pytest
from django.core.cache import cache
from django.db import IntegrityError, transaction
from django.utils import timezone

from sales import cache_keys
from sales.models import Sale
from sales.services import sale_update
from testutils.factories.goods import make_goods
from testutils.factories.sales import make_sale
from testutils.factories.users import make_merchant
from testutils.factories.waitingroom import make_room
from waitingroom.models import RoomAction, WaitingRoom, WaitingRoomAction
from waitingroom.room import OFF, Room, room_forget, room_read
from waitingroom.services import room_settings_save, room_switch

pytestmark = pytest.mark.django_db


@pytest.fixture
def merchant_sale():
    merchant = make_merchant(nickname="A")
    return merchant, make_sale(goods=make_goods(owner=merchant, name="A-Tea"), starts_in=3600)


def _form(sale: Sale, **changes) -> dict:
    data = {"sale": sale.pk, "enabled": "on", "admit_per_minute": "60", "active_shoppers": "", "pass_minutes": "10"}
    data.update(changes)
    return {name: value for name, value in data.items() if value is not None}


def _split(when) -> dict:
    local = timezone.localtime(when)
    return {"prequeue_opens_at_0": local.strftime("%Y-%m-%d"), "prequeue_opens_at_1": local.strftime("%H:%M:%S")}


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"admit_per_minute": ""}, "A room that is on needs shoppers per minute, shoppers in at once, or both."),
        ({"pass_minutes": "0"}, "Ensure this value is greater than or equal to 1."),
        ({"pass_minutes": "61"}, "Ensure this value is less than or equal to 60."),
        ({"admit_per_minute": "0"}, "Ensure this value is greater than or equal to 1."),
        ("after-start", "The pre-queue must open before the sale starts."),
    ],
)
def test_a_bad_setting_is_a_form_error_and_sets_up_nothing(
    client, merchant_sale, changes, message, django_capture_on_commit_callbacks
):
    merchant, sale = merchant_sale
    client.force_login(merchant)
    if changes == "after-start":
        changes = _split(sale.start_at + timedelta(minutes=1))
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post("/admin/waitingroom/waitingroom/add/", _form(sale, **changes))
    assert response.status_code == 200
    assert message in response.content.decode()
    assert not WaitingRoom.objects.exists() and not WaitingRoomAction.objects.exists()
    assert room_read(sale.pk) == OFF


def test_a_bad_change_leaves_the_room_as_it_was_in_the_database_and_redis(
    client, merchant_sale, django_capture_on_commit_callbacks
):
    merchant, sale = merchant_sale
    with django_capture_on_commit_callbacks(execute=True):
        room = make_room(sale=sale, admit_per_minute=30)
    published = room_read(sale.pk)
    client.force_login(merchant)
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(
            f"/admin/waitingroom/waitingroom/{room.pk}/change/", _form(sale, admit_per_minute="", pass_minutes="600")
        )
    assert response.status_code == 200 and b"errornote" in response.content
    room.refresh_from_db()
    assert (room.admit_per_minute, room.pass_minutes) == (30, 10)
    assert list(WaitingRoomAction.objects.values_list("action", flat=True)) == [RoomAction.CREATED]
    room_forget()
    assert room_read(sale.pk) == published


def test_the_database_refuses_a_room_on_without_a_pace_or_with_a_pass_out_of_bounds(merchant_sale):
    _merchant, sale = merchant_sale
    for fields in ({"enabled": True}, {"pass_minutes": 0}, {"pass_minutes": 61}, {"active_shoppers": 0}):
        with pytest.raises(IntegrityError), transaction.atomic():
            WaitingRoom.objects.create(sale=sale, **fields)


def test_a_room_set_up_in_the_admin_is_logged_and_published_once_committed(
    client, merchant_sale, django_capture_on_commit_callbacks
):
    merchant, sale = merchant_sale
    client.force_login(merchant)
    opens = sale.start_at - timedelta(minutes=30)
    form = _form(sale, active_shoppers="500", pass_minutes="7", brake="on", **_split(opens))
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post("/admin/waitingroom/waitingroom/add/", form)
    assert response.status_code == 302
    room = WaitingRoom.objects.get(sale=sale)
    action = WaitingRoomAction.objects.get()
    assert (action.sale_id, action.actor, action.action) == (sale.pk, merchant, RoomAction.CREATED)
    assert room_read(sale.pk) == Room(
        on=True,
        opens_at=int(opens.replace(microsecond=0).timestamp()),
        starts_at=int(sale.start_at.timestamp()),
        admit_per_minute=60,
        active_max=500,
        pass_seconds=420,
        brake=True,
    )
    assert room.queue_all is False and room.stop_admitting is False


def test_a_change_is_logged_with_its_old_and_new_values_and_keeps_a_switch_thrown_meanwhile(
    client, merchant_sale, django_capture_on_commit_callbacks
):
    from waitingroom.services import room_switch

    merchant, sale = merchant_sale
    with django_capture_on_commit_callbacks(execute=True):
        room = make_room(sale=sale)
    client.force_login(merchant)
    page = client.get(f"/admin/waitingroom/waitingroom/{room.pk}/change/")  # the merchant reads the form
    assert page.status_code == 200
    with django_capture_on_commit_callbacks(execute=True):
        room_switch(sale=sale, switch="stop", on=True)  # an operator stops the room meanwhile
        client.post(f"/admin/waitingroom/waitingroom/{room.pk}/change/", _form(sale, admit_per_minute="90", brake="on"))
    change = WaitingRoomAction.objects.get(action=RoomAction.SETTINGS)
    assert (change.old, change.new, change.actor) == ({"admit_per_minute": 60}, {"admit_per_minute": 90}, merchant)
    room.refresh_from_db()
    assert room.stop_admitting and room.admit_per_minute == 90
    assert room_read(sale.pk).stop and room_read(sale.pk).admit_per_minute == 90


def test_moving_the_sales_start_publishes_its_room_again(merchant_sale, django_capture_on_commit_callbacks):
    _merchant, sale = merchant_sale
    with django_capture_on_commit_callbacks(execute=True):
        make_room(sale=sale)
    assert room_read(sale.pk).starts_at == int(sale.start_at.timestamp())
    later = sale.start_at + timedelta(hours=2)
    with django_capture_on_commit_callbacks(execute=True):
        moved = {"start_at": later, "end_at": later + timedelta(hours=1)}
        sale_update(sale=Sale.objects.get(pk=sale.pk), changes=moved)
    room_forget()
    room = room_read(sale.pk)
    assert room.starts_at == room.opens_at == int(later.timestamp())


def test_a_sale_deleted_takes_its_room_off_every_node(merchant_sale, django_capture_on_commit_callbacks):
    from sales.services import sale_delete

    _merchant, sale = merchant_sale
    with django_capture_on_commit_callbacks(execute=True):
        make_room(sale=sale)
    with django_capture_on_commit_callbacks(execute=True):
        sale_delete(sale=sale)
    room_forget()
    assert room_read(sale.pk) == OFF


def test_a_merchant_neither_lists_nor_reaches_another_merchants_room(client, django_capture_on_commit_callbacks):
    a, b = make_merchant(nickname="A"), make_merchant(nickname="B")
    sale_a = make_sale(goods=make_goods(owner=a, name="A-Tea"))
    sale_b = make_sale(goods=make_goods(owner=b, name="B-Phone"))
    with django_capture_on_commit_callbacks(execute=True):
        make_room(sale=sale_a)
        room_b = make_room(sale=sale_b)
    client.force_login(a)
    listed = client.get("/admin/waitingroom/waitingroom/").content
    assert b"A-Tea" in listed and b"B-Phone" not in listed
    for url in (f"/admin/waitingroom/waitingroom/{room_b.pk}/change/", f"/admin/orders/order/sale/{sale_b.pk}/live/"):
        response = client.get(url)
        assert response.status_code in (302, 404) and b"B-Phone" not in response.content
    # Nor can the merchant throw its switches, nor set up a room on the other's sale.
    with django_capture_on_commit_callbacks(execute=True):
        client.post("/admin/waitingroom/waitingroom/", {"action": "stop_on", "_selected_action": [room_b.pk]})
        client.post("/admin/waitingroom/waitingroom/add/", _form(sale_b))
    room_b.refresh_from_db()
    assert not room_b.stop_admitting
    assert not WaitingRoomAction.objects.filter(sale=sale_b).exclude(action=RoomAction.CREATED).exists()
    log = client.get("/admin/waitingroom/waitingroomaction/").content
    assert b"B-Phone" not in log


def test_turning_a_room_on_or_off_drops_the_sale_page_a_switch_does_not(django_capture_on_commit_callbacks):
    """The item page says whether its sale has a room and is kept for everybody: it is dropped
    when that changes, and left alone when an operator throws a switch at the opening."""
    sale = make_sale(goods=make_goods(owner=make_merchant(nickname="Pages")))
    page = cache_keys.sale_cache(sale.pk)

    def dropped(change) -> bool:
        cache.set(page, "page", 60)
        room_forget()
        with django_capture_on_commit_callbacks(execute=True):
            change()
        return cache.get(page) is None

    assert dropped(lambda: make_room(sale=sale))
    assert not dropped(lambda: room_switch(sale=sale, switch="queue_all", on=True))
    room = WaitingRoom.objects.get(sale=sale)
    room.enabled = False
    assert dropped(lambda: room_settings_save(room=room))
