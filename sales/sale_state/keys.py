"""The names of a sale's Redis keys and their lifetimes, private to sales.sale_state.

Every key of one sale shares the hash tag `{sale_id}`, so a script touching several stays in
one Redis Cluster slot. docs/architecture.md, "Redis keys", describes each.
"""

from functools import cache

from redis.crc import REDIS_CLUSTER_HASH_SLOTS as SLOTS
from redis.crc import key_slot

from seckill_site.redis.keys import PREFIX

RESULT_TTL = 24 * 60 * 60
CAPTCHA_TTL = 5 * 60
PATH_TTL = 60
# Per-sale limits of one shopper: a fixed window from the first try.
LIMIT_WINDOW = 60
REFUSED_TTL = 7 * 24 * 60 * 60
# Buys per shopper per sale in a fixed window, counted by the call that takes the unit.
GATE_RATE_COUNT = 5
GATE_RATE_SECONDS = 5
# Longer than any cancellation's after-commit step can be late.
RETURNED_TTL = 24 * 60 * 60
REBUILD_LOCK_TTL = 10
# Longer than a reconcile takes, short enough that a crashed reconciler's sale is soon retaken.
RECONCILE_LOCK_TTL = 50


def _sale(sale_id: int) -> str:
    return f"{PREFIX}sk:{{{sale_id}}}"


def pattern(sale_id: int) -> str:
    return f"{_sale(sale_id)}:*"


def shards_pattern(sale_id: int) -> str:
    return f"{PREFIX}sk:{{{sale_id}:e*"


def slot(sale_id: int) -> int:
    """The Redis Cluster slot of the sale's own keys (not its entry shards'): where it is hot."""
    return key_slot(stock(sale_id).encode())


def stock(sale_id: int) -> str:
    return f"{_sale(sale_id)}:stock"


def window(sale_id: int) -> str:
    return f"{_sale(sale_id)}:window"


def generation(sale_id: int) -> str:
    return f"{_sale(sale_id)}:gen"


def buyers(sale_id: int) -> str:
    return f"{_sale(sale_id)}:buyers"


def reservations(sale_id: int) -> str:
    return f"{_sale(sale_id)}:reservations"


def claims(sale_id: int) -> str:
    return f"{_sale(sale_id)}:claims"


def flush(sale_id: int) -> str:
    return f"{_sale(sale_id)}:flush"


def result(sale_id: int, user_id: int) -> str:
    return f"{_sale(sale_id)}:result:{user_id}"


def returned(sale_id: int, order_id: int) -> str:
    return f"{_sale(sale_id)}:returned:{order_id}"


def gate_rate(sale_id: int, user_id: int) -> str:
    return f"{_sale(sale_id)}:rate:{user_id}"


def captcha(sale_id: int, user_id: int, shards: int = 1) -> str:
    return f"{_shopper(sale_id, user_id, shards)}:captcha:{user_id}"


def path(sale_id: int, user_id: int) -> str:
    return f"{_sale(sale_id)}:path:{user_id}"


def limit(sale_id: int, action: str, user_id: int, shards: int = 1) -> str:
    return f"{_shopper(sale_id, user_id, shards)}:limit:{action}:{user_id}"


def refused(sale_id: int, shard: int = 0, shards: int = 1) -> str:
    return f"{_shard(sale_id, shard, shards)}:refused"


# A draw sale's entry shards: with K=1 the sale itself, with K>1 a hash tag each.


def entry_shard(user_id: int, shards: int) -> int:
    return user_id % shards


def _shard(sale_id: int, shard: int, shards: int) -> str:
    return _sale(sale_id) if shards == 1 else f"{PREFIX}sk:{{{shard_tag(sale_id, shard, shards)}}}"


@cache
def shard_tag(sale_id: int, shard: int, shards: int) -> str:
    """Shard k's hash tag, "<sale>:e<k>:<n>" with the smallest n that puts it in the k-th of K
    equal ranges of the slots: tags taken as they come fall on the primaries unevenly, while a
    new cluster gives each primary one equal range."""
    low, high = shard * SLOTS // shards, (shard + 1) * SLOTS // shards
    for salt in range(1_000_000):
        tag = f"{sale_id}:e{shard}:{salt}"
        if low <= key_slot(tag.encode()) < high:
            return tag
    raise AssertionError("no tag found")  # CRC16 covers every range within K tries on average


def _shopper(sale_id: int, user_id: int, shards: int) -> str:
    return _shard(sale_id, entry_shard(user_id, shards), shards)


def shard_window(sale_id: int, shard: int, shards: int) -> str:
    return f"{_shard(sale_id, shard, shards)}:window"


def entrants(sale_id: int, shard: int = 0, shards: int = 1) -> str:
    return f"{_shard(sale_id, shard, shards)}:entrants"


def entries(sale_id: int, shard: int = 0, shards: int = 1) -> str:
    return f"{_shard(sale_id, shard, shards)}:entries"


def entry_path(sale_id: int, user_id: int, shards: int) -> str:
    if shards == 1:
        return path(sale_id, user_id)
    return f"{_shopper(sale_id, user_id, shards)}:path:{user_id}"


def entry_rate(sale_id: int, user_id: int, shards: int) -> str:
    if shards == 1:
        return gate_rate(sale_id, user_id)
    return f"{_shopper(sale_id, user_id, shards)}:rate:{user_id}"


def won(sale_id: int) -> str:
    return f"{_sale(sale_id)}:won"


def closed(sale_id: int) -> str:
    """The refusal every buy of the sale gets now ("SOLD_OUT", "ENTRIES_CLOSED"), published for
    the edge (deploy/edge-answers.vcl) for as long as a process's sold-out mark lasts."""
    return f"{_sale(sale_id)}:closed"


def drawn(sale_id: int) -> str:
    return f"{_sale(sale_id)}:drawn"


def draw_lock(sale_id: int) -> str:
    return f"{_sale(sale_id)}:draw-lock"


DRAW_LOCK_TTL = 60
# Winners per draw_apply.lua call: each call holds the slot briefly.
DRAW_CHUNK = 500


def rebuild_lock(sale_id: int) -> str:
    return f"{_sale(sale_id)}:rebuild-lock"


def reconcile_lock(sale_id: int) -> str:
    return f"{_sale(sale_id)}:reconcile-lock"


# A made draw's waiting list as published to Redis (sale_state.waitlist): each waiting entrant's
# 1-based place on it, and the list's counter.
def waitlist_places(sale_id: int) -> str:
    return f"{_sale(sale_id)}:waitlist:places"


def waitlist(sale_id: int) -> str:
    return f"{_sale(sale_id)}:waitlist"


# Places per ZADD when the list is first written: each call holds the slot briefly.
WAITLIST_CHUNK = 5000
