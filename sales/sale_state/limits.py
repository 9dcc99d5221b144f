"""A shopper's steps before a buy: the per-sale limits, the captcha's answer, the one-time path.
With entry shards they live on the shopper's shard, as the entry does."""

from __future__ import annotations

from sales.sale_state import keys
from sales.sale_state.draw import shard_hashes_summed
from sales.sale_state.marks import draw_at, shards
from seckill_site.redis import client, script


def limit_take(*, sale_id: int, user_id: int, action: str, limit: int) -> int:
    """Count one `action`: 0 within `limit` per window, else the seconds until it ends."""
    count = shards(sale_id)
    tally = keys.refused(sale_id, keys.entry_shard(user_id, count), count)
    return int(
        script("limit_take")(
            keys=[keys.limit(sale_id, action, user_id, count), tally],
            args=[limit, keys.LIMIT_WINDOW, action, keys.REFUSED_TTL],
        )
    )


def captcha_answer_set(*, sale_id: int, user_id: int, answer: int) -> None:
    """The answer of the captcha just drawn; it replaces any earlier one."""
    client().set(keys.captcha(sale_id, user_id, shards(sale_id)), answer, ex=keys.CAPTCHA_TTL)


def captcha_answer_take(*, sale_id: int, user_id: int) -> int | None:
    """The expected answer, consumed (one try per captcha); None when none is pending."""
    expected = client().getdel(keys.captcha(sale_id, user_id, shards(sale_id)))
    return int(expected) if expected is not None else None


def path_set(*, sale_id: int, user_id: int, path: str) -> None:
    """The shopper's one-time path, and with entry shards a copy on their shard for enter.lua."""
    count = shards(sale_id)
    if count == 1 or not draw_at(sale_id):
        client().set(keys.path(sale_id, user_id), path, ex=keys.PATH_TTL)
        return
    pipeline = client().pipeline(transaction=False)  # two slots: two commands, one round trip per node
    pipeline.set(keys.path(sale_id, user_id), path, ex=keys.PATH_TTL)
    pipeline.set(keys.entry_path(sale_id, user_id, count), path, ex=keys.PATH_TTL)
    pipeline.execute()


def refusals(sale_id: int) -> dict[str, int]:
    """Requests the per-sale limits refused, by action."""
    return shard_hashes_summed(sale_id, keys.refused)
