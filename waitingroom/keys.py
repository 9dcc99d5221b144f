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


# The queue engine's keys, which the live view reads (waitingroom.figures).


def queue(sale_id: int) -> str:
    """Sorted set: the shoppers in the queue, member user id, score their position."""
    return f"{_room(sale_id)}:queue"


def head(sale_id: int) -> str:
    """Integer: the last position admitted; positions up to it are in."""
    return f"{_room(sale_id)}:head"


def tail(sale_id: int) -> str:
    """Integer: the last position handed out."""
    return f"{_room(sale_id)}:tail"


def admitted_log(sale_id: int) -> str:
    """Sorted set: member user id, score the epoch second they were admitted."""
    return f"{_room(sale_id)}:admitted"


def waits(sale_id: int) -> str:
    """Sorted set: member user id, score the seconds they waited before they were admitted."""
    return f"{_room(sale_id)}:waits"


def abandoned(sale_id: int) -> str:
    """Integer: shoppers who left the queue before their turn."""
    return f"{_room(sale_id)}:abandoned"
