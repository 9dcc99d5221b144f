"""The names of a sale's Redis keys, with their lifetimes. Private to goods.sale_state:
nothing else builds them (seckill_site/tests/test_layout.py checks).

Every key of one sale shares the hash tag `{sale_id}`, so that a Lua script touching several
of them stays valid on Redis Cluster (all keys of one call must live in one slot). The
project-wide REDIS_KEY_PREFIX ("" in production, one per test run) stands before the tag.
"""

from functools import cache

from redis.crc import REDIS_CLUSTER_HASH_SLOTS as SLOTS
from redis.crc import key_slot

from seckill_site.redis.keys import PREFIX

# What /seckill/result answers: "0" queued, order id, or "-1" failed. A day is plenty for
# polling; older answers come from the database.
RESULT_TTL = 24 * 60 * 60
# Captcha answer, per user and sale: single use (GETDEL), 5 minutes.
CAPTCHA_TTL = 5 * 60
# One-time seckill path, per user and sale: deleted on use, 60 seconds.
PATH_TTL = 60
# Per-sale limits of one shopper (captchas drawn, paths taken): a fixed window from the first.
LIMIT_WINDOW = 60
# How many requests those limits refused, per sale, for the merchant's live view; kept a week.
REFUSED_TTL = 7 * 24 * 60 * 60
# The gate's rate limit: buys per shopper per sale in a fixed window from the first
# (reserve.lua counts them in the same call that takes the unit).
GATE_RATE_COUNT = 5
GATE_RATE_SECONDS = 5
# A cancelled order's returned-mark (unit_return.lua): longer than any cancellation's
# after-commit step can be late.
RETURNED_TTL = 24 * 60 * 60
# Rebuild lock after Redis lost a sale's keys: one process rebuilds, others answer "busy".
REBUILD_LOCK_TTL = 10
# One reconciler per sale at a time: longer than reconciling a few hundred stale reservations
# takes, short enough that a crashed reconciler's sale is picked up again within a minute.
RECONCILE_LOCK_TTL = 50


def _sale(sale_id: int) -> str:
    return f"{PREFIX}sk:{{{sale_id}}}"


def pattern(sale_id: int) -> str:
    """SCAN pattern of every key of one sale under its own hash tag (not its entry shards')."""
    return f"{_sale(sale_id)}:*"


def shards_pattern(sale_id: int) -> str:
    """SCAN pattern of every key of a sale's entry shards (entry_shard)."""
    return f"{PREFIX}sk:{{{sale_id}:e*"


def stock(sale_id: int) -> str:
    """Units left to hand out (no TTL: loaded from the database)."""
    return f"{_sale(sale_id)}:stock"


def window(sale_id: int) -> str:
    """Hash {start, end} in epoch seconds: the gate's sale window (no TTL)."""
    return f"{_sale(sale_id)}:window"


def generation(sale_id: int) -> str:
    """A random value rewritten by every load from the database: the ticket of changes that
    reach Redis after their commit (unit_return.lua, stock_add.lua)."""
    return f"{_sale(sale_id)}:gen"


def buyers(sale_id: int) -> str:
    """Set of user ids holding a unit of this sale: a reservation or a live order (no TTL)."""
    return f"{_sale(sale_id)}:buyers"


def reservations(sale_id: int) -> str:
    """Hash request_id -> "user_id:epoch_seconds[:trace]": units handed out whose orders are
    not settled yet (no TTL). The trace is the id of the HTTP request that bought the unit,
    for the order writer's log line."""
    return f"{_sale(sale_id)}:reservations"


def claims(sale_id: int) -> str:
    """Hash request_id -> "token:lease_until_ms": the reservations a writer holds."""
    return f"{_sale(sale_id)}:claims"


def flush(sale_id: int) -> str:
    """Present while a flush of the sale is queued or running (the writer's outbox mark): its
    value is the request id of the buy that set it, or the token of the flush that renewed it."""
    return f"{_sale(sale_id)}:flush"


def result(sale_id: int, user_id: int) -> str:
    return f"{_sale(sale_id)}:result:{user_id}"


def returned(sale_id: int, order_id: int) -> str:
    return f"{_sale(sale_id)}:returned:{order_id}"


def gate_rate(sale_id: int, user_id: int) -> str:
    """Buy requests of one shopper for this sale that could still buy (GATE_RATE_SECONDS)."""
    return f"{_sale(sale_id)}:rate:{user_id}"


def captcha(sale_id: int, user_id: int, shards: int = 1) -> str:
    """With entry shards, on the shopper's shard (as limit() and refused()): the captcha step of
    an opening's entrants takes no call on the sale's slot either."""
    return f"{_shopper(sale_id, user_id, shards)}:captcha:{user_id}"


def path(sale_id: int, user_id: int) -> str:
    return f"{_sale(sale_id)}:path:{user_id}"


def limit(sale_id: int, action: str, user_id: int, shards: int = 1) -> str:
    """Counter of one shopper's `action` (captcha, path) on this sale (LIMIT_WINDOW)."""
    return f"{_shopper(sale_id, user_id, shards)}:limit:{action}:{user_id}"


def refused(sale_id: int, shard: int = 0, shards: int = 1) -> str:
    """Hash action -> requests refused by the per-sale limits (REFUSED_TTL), one per entry shard
    (limit_take.lua counts a refusal beside the shopper's counter), summed for the live view."""
    return f"{_shard(sale_id, shard, shards)}:refused"


# --- a draw sale's entry shards --------------------------------------------------------------
#
# A draw sale's entries are spread over `shards` sets, K of them (the window hash's `shards`
# field, fixed when the sale is loaded): a shopper's entry goes to shard user_id % K, so "one
# entry per shopper" is one SADD on one set. With K=1 the one shard is the sale itself, under
# the sale's hash tag, as every key above. With K>1 shard k has its own hash tag (shard_tag: in
# the k-th K-th of the Redis Cluster's slots, so the shards spread over the primaries), and
# holds what enter.lua reads and writes: a copy of the sale window, the entrants, the entries a
# second, the shopper's one-time path and entry counter; and the shopper's captcha answer and
# per-sale limits (captcha(), limit(), refused()). The sale's own slot sees no call per entry,
# and one SET per shopper in the steps before it (the path's copy reserve.lua takes after the draw).


def entry_shard(user_id: int, shards: int) -> int:
    """The shard a shopper's entry goes to, 0 <= k < shards (the same on every process)."""
    return user_id % shards


def _shard(sale_id: int, shard: int, shards: int) -> str:
    return _sale(sale_id) if shards == 1 else f"{PREFIX}sk:{{{shard_tag(sale_id, shard, shards)}}}"


@cache
def shard_tag(sale_id: int, shard: int, shards: int) -> str:
    """Shard k's hash tag, "<sale>:e<k>:<n>" with the smallest n that puts it in the k-th of K
    equal ranges of the 16,384 slots. Hash tags taken as they come fall on the primaries as
    unevenly as dice (16 of them put 38 to 62 % on one of three, tools/draw_bench); a cluster
    made by `redis-cli --cluster create` gives each primary one contiguous, equal range, so K
    shards over K ranges spread as evenly as K allows (a resharded cluster: as its ranges do)."""
    low, high = shard * SLOTS // shards, (shard + 1) * SLOTS // shards
    for salt in range(1_000_000):
        tag = f"{sale_id}:e{shard}:{salt}"
        if low <= key_slot(tag.encode()) < high:
            return tag
    raise AssertionError("no tag found")  # CRC16 covers every range within K tries on average


def _shopper(sale_id: int, user_id: int, shards: int) -> str:
    return _shard(sale_id, entry_shard(user_id, shards), shards)


def shard_window(sale_id: int, shard: int, shards: int) -> str:
    """Hash {start, end, draw, closed}: shard k's copy of the sale window (with K=1, the window
    itself). `closed` is set by draw_due.lua once the draw is due: no entry is taken after it."""
    return f"{_shard(sale_id, shard, shards)}:window"


def entrants(sale_id: int, shard: int = 0, shards: int = 1) -> str:
    """Set of user ids entered in a draw sale's entry window (enter.lua), one per shard; no stock
    is theirs until the draw (draw_apply.lua). No TTL: the draw's audit copy is in PostgreSQL."""
    return f"{_shard(sale_id, shard, shards)}:entrants"


def entries(sale_id: int, shard: int = 0, shards: int = 1) -> str:
    """Hash epoch second -> entries taken in it (enter.lua), one per shard: the live view's
    entrants a second, summed over the shards."""
    return f"{_shard(sale_id, shard, shards)}:entries"


def entry_path(sale_id: int, user_id: int, shards: int) -> str:
    """The shopper's one-time path as enter.lua takes it: with K=1 path(), with K>1 a copy on
    the shopper's shard (sale_state.path_set writes both)."""
    if shards == 1:
        return path(sale_id, user_id)
    return f"{_shopper(sale_id, user_id, shards)}:path:{user_id}"


def entry_rate(sale_id: int, user_id: int, shards: int) -> str:
    """The shopper's entry tries for the rate limit: with K=1 gate_rate() (shared with buys),
    with K>1 a counter on the shopper's shard."""
    if shards == 1:
        return gate_rate(sale_id, user_id)
    return f"{_shopper(sale_id, user_id, shards)}:rate:{user_id}"


def won(sale_id: int) -> str:
    """Set of the draw's winners turned into reservations (draw_apply.lua): each at most once,
    however often a chunk is applied again (no TTL)."""
    return f"{_sale(sale_id)}:won"


def drawn(sale_id: int) -> str:
    """Present once the sale's draw is applied in full: buys (reserve.lua) wait for it, and an
    entrant's "entered" answer then reads "not drawn"."""
    return f"{_sale(sale_id)}:drawn"


def draw_lock(sale_id: int) -> str:
    """One drawer at a time per sale (the database's claim on the draw decides; this spares
    the others the work)."""
    return f"{_sale(sale_id)}:draw-lock"


# A drawer holds the sale's draw lock at most this long (the draw of 10^6 entrants reads them
# in pages and writes winners in chunks: seconds, not minutes).
DRAW_LOCK_TTL = 60
# Winners turned into reservations per draw_apply.lua call: a short hold of the shard each.
DRAW_CHUNK = 500


def rebuild_lock(sale_id: int) -> str:
    return f"{_sale(sale_id)}:rebuild-lock"


def reconcile_lock(sale_id: int) -> str:
    return f"{_sale(sale_id)}:reconcile-lock"
