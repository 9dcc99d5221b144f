import pytest

from waitingroom.room import room_forget, shop_switches_write


@pytest.fixture(autouse=True)
def rooms_forgotten():
    """Each test starts with no room known to this process and leaves the shop-wide switches
    off: a room or a switch one test set must not steer the next."""
    room_forget()
    yield
    shop_switches_write(queue_all=False, stop=False)
    room_forget()
