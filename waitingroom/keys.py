"""The waiting room's Redis keys. A sale's room lives under a hash tag of its own,
`{<sale>:w}`, so the crowd queueing for a sale never lands on the slot its buys use; the
shop-wide switches sit under `{wr}`."""

from seckill_site.redis.keys import PREFIX


def _room(sale_id: int) -> str:
    return f"{PREFIX}wr:{{{sale_id}:w}}"


def room(sale_id: int) -> str:
    """Hash: the room's settings as the admin saved them (waitingroom.room.Room's fields)."""
    return f"{_room(sale_id)}:room"


def shop() -> str:
    """Hash: the shop-wide operator switches, `all` (queue everyone) and `stop` (admit no one)."""
    return f"{PREFIX}wr:{{wr}}:shop"
