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


def queue(sale_id: int) -> str:
    """Sorted set: member a user id, score their place in line (1 first)."""
    return f"{_room(sale_id)}:queue"


def head(sale_id: int) -> str:
    """Integer: every place up to it has been admitted."""
    return f"{_room(sale_id)}:head"


def tail(sale_id: int) -> str:
    """Integer: the last place given out."""
    return f"{_room(sale_id)}:tail"


def prequeue(sale_id: int) -> str:
    """Set: the user ids that arrived before the opening, placed by the shuffle at the start."""
    return f"{_room(sale_id)}:pre"


def joined(sale_id: int) -> str:
    """Sorted set: member a user id, score the epoch second they joined (for their wait)."""
    return f"{_room(sale_id)}:joined"


def seed(sale_id: int) -> str:
    """Hash: the shuffle's `nonce` and `sha256` (published ahead), then `seed` and `shuffled`
    (the pre-queue's size) once the shuffle is made."""
    return f"{_room(sale_id)}:seed"


def bucket(sale_id: int) -> str:
    """Hash: the admission's token bucket, `at` (epoch seconds of its last count) and `tokens`."""
    return f"{_room(sale_id)}:bucket"


def active(sale_id: int) -> str:
    """Sorted set: member an admitted user id, score the epoch second their pass ends."""
    return f"{_room(sale_id)}:active"


def admitted_log(sale_id: int) -> str:
    """Sorted set: member a user id, score the epoch second they took their pass."""
    return f"{_room(sale_id)}:admitted"


def waits(sale_id: int) -> str:
    """Sorted set: member a user id, score the seconds they waited from joining to their pass."""
    return f"{_room(sale_id)}:waits"


def abandoned(sale_id: int) -> str:
    """Integer: shoppers admitted who never came for their pass before it would have ended."""
    return f"{_room(sale_id)}:abandoned"


def room_keys(sale_id: int) -> list[str]:
    """Every key of the sale's room but its settings (a test's or an operator's reset)."""
    return [
        queue(sale_id),
        head(sale_id),
        tail(sale_id),
        prequeue(sale_id),
        joined(sale_id),
        seed(sale_id),
        bucket(sale_id),
        active(sale_id),
        admitted_log(sale_id),
        waits(sale_id),
        abandoned(sale_id),
    ]
