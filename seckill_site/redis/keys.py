"""Every Redis key the shop uses, built in one place with its lifetime beside it.

Keys of one sale share the hash tag `{sale_id}` so that a Lua script touching several of
them stays valid on Redis Cluster (all keys of one call must live in one slot).

Every key starts with settings.REDIS_KEY_PREFIX ("" in production): a test run gets a prefix
of its own and deletes only its own keys, so it never needs FLUSHDB (a cluster, or a server
shared with others, must not be flushed). The prefix stands before the hash tag, so one
sale's keys still share a slot.
"""

import random

from django.conf import settings

PREFIX: str = settings.REDIS_KEY_PREFIX


def jittered(seconds: float) -> int:
    """`seconds` plus up to a fifth more, at random, for every cache entry's TTL: entries
    written together (a warm-up, a deploy, one burst) then expire apart, not in one second."""
    return int(seconds + random.uniform(0, seconds / 5))


# Captcha answer, per user and sale: single use (GETDEL), 5 minutes (seed 000).
CAPTCHA_TTL = 5 * 60
# One-time seckill path, per user and sale: deleted on use, 60 seconds (seed 000).
PATH_TTL = 60
# What /seckill/result answers: "0" queued, order id, or "-1" failed. A day is plenty for
# polling; older answers come from the database.
RESULT_TTL = 24 * 60 * 60
# Per-sale limits of one shopper: captchas drawn and paths taken (settings
# SECKILL_CAPTCHAS_PER_MINUTE, SECKILL_PATHS_PER_MINUTE), a fixed window from the first one.
SALE_LIMIT_WINDOW = 60
# How many requests those limits refused, per sale, for the merchant's live view; kept a
# week after the last refusal.
SALE_REFUSED_TTL = 7 * 24 * 60 * 60
# Text-message codes (users.verification): a code lives 5 minutes and allows 5 checks. Per
# number and requester (client IP, IPv6 /64): one message a minute, 5 a day; per number, all
# requesters together, SMS_SENDS_PER_NUMBER_PER_DAY (requesters it knows exempt); per
# requester, SMS_SENDS_PER_IP_PER_HOUR; the whole shop, SMS_SENDS_PER_HOUR. Keys of one number
# share its hash tag, so the Lua scripts stay in one slot.
SMS_CODE_TTL = 5 * 60
SMS_CODE_MAX_CHECKS = 5
SMS_RESEND_SECONDS = 60
SMS_DAY_SECONDS = 24 * 60 * 60
SMS_SENDS_PER_DAY = 5
SMS_IP_WINDOW = 60 * 60
# A requester that entered a code sent to a number is known to it for 30 days after the last time.
SMS_KNOWN_TTL = 30 * 24 * 60 * 60
# The shop's hourly count lives two hours, so the hour just ended can still be read.
SMS_SHOP_HOUR_TTL = 2 * 60 * 60
# Accounts registered per client IP per hour, for the admin; kept a week.
REGISTRATIONS_TTL = 7 * 24 * 60 * 60
# Cached item data for the detail JSON and the gate's sale window: fresh for ~30 s (jittered),
# then kept SALE_CACHE_STALE_TTL longer so that readers serve it while one process, holding
# the sale's cache lock for at most SALE_CACHE_LOCK_TTL, reads it again from PostgreSQL.
SALE_CACHE_TTL = 30
SALE_CACHE_STALE_TTL = 30
SALE_CACHE_LOCK_TTL = 5
# A miss for an unknown sale id is remembered briefly (jittered) so repeated misses skip PostgreSQL.
SALE_MISSING_TTL = 30
# Rebuild lock after Redis lost a sale's keys: one process rebuilds, others answer "busy".
SALE_REBUILD_LOCK_TTL = 10
# The cached list page, ~60 s plus jitter (settings.GOODS_LIST_CACHE_SECONDS), and the
# mutex (owner token, compare-and-delete release) that lets one request render it while the
# others wait.
GOODS_LIST_LOCK_TTL = 5


def _sale(sale_id: int) -> str:
    return f"{PREFIX}sk:{{{sale_id}}}"


def sale_pattern(sale_id: int) -> str:
    """SCAN pattern of every key of one sale."""
    return f"{_sale(sale_id)}:*"


def stock(sale_id: int) -> str:
    """Units left to hand out (no TTL: rebuilt from the database by seckill_warm)."""
    return f"{_sale(sale_id)}:stock"


def buyers(sale_id: int) -> str:
    """Set of user ids holding a unit of this sale (no TTL)."""
    return f"{_sale(sale_id)}:buyers"


def reservations(sale_id: int) -> str:
    """Hash request_id -> "user_id:epoch_seconds[:trace]" for units handed out but not yet
    written (no TTL). The trace is the id of the HTTP request that bought the unit, for the
    order writer's log line (the batch writer has no message of its own per buy)."""
    return f"{_sale(sale_id)}:reservations"


def reservation_parse(value: bytes) -> tuple[int, float, str]:
    """A reservation's (user id, epoch seconds, trace or ""). The trace may hold ":" itself."""
    user_id, reserved_at, *trace = value.decode().split(":", 2)
    return int(user_id), float(reserved_at), trace[0] if trace else ""


def flush_pending(sale_id: int) -> str:
    """Present while a "flush sale N" message is queued or its writer is still draining the
    sale's reservations (settings.SECKILL_WRITER_FLUSH_MARK_MS at most): the batch writer's
    outbox mark. reserve.lua sets it (SET NX PX) and says whether this buy must publish the
    message; finish_batch.lua deletes it once no reservation is left."""
    return f"{_sale(sale_id)}:flush"


def window(sale_id: int) -> str:
    """Hash {start, end} in epoch seconds: the gate's sale window (no TTL, rewritten by warm)."""
    return f"{_sale(sale_id)}:window"


# The gate's rate limit: buys per shopper per sale in a fixed window from the first
# (reserve.lua counts them in the same call that takes the unit).
GATE_RATE_COUNT = 5
GATE_RATE_SECONDS = 5


def gate_rate(sale_id: int, user_id: int) -> str:
    """Buy requests of one shopper for this sale that could still buy (GATE_RATE_SECONDS)."""
    return f"{_sale(sale_id)}:rate:{user_id}"


def captcha(sale_id: int, user_id: int) -> str:
    return f"{_sale(sale_id)}:captcha:{user_id}"


def path(sale_id: int, user_id: int) -> str:
    return f"{_sale(sale_id)}:path:{user_id}"


def sale_limit(sale_id: int, action: str, user_id: int) -> str:
    """Counter of one shopper's `action` (captcha, path) on this sale (SALE_LIMIT_WINDOW)."""
    return f"{_sale(sale_id)}:limit:{action}:{user_id}"


def sale_refused(sale_id: int) -> str:
    """Hash action -> requests refused by the per-sale limits (SALE_REFUSED_TTL)."""
    return f"{_sale(sale_id)}:refused"


def result(sale_id: int, user_id: int) -> str:
    return f"{_sale(sale_id)}:result:{user_id}"


def released(sale_id: int, request_id: str) -> str:
    """Tombstone of a reservation the gate gave back (RESULT_TTL): its message, if the broker
    got it after all, must not write an order."""
    return f"{_sale(sale_id)}:released:{request_id}"


def rebuild_lock(sale_id: int) -> str:
    return f"{_sale(sale_id)}:rebuild-lock"


# One reconciler per sale at a time: longer than reconciling a few hundred stale reservations
# takes, short enough that a crashed reconciler's sale is picked up again within a minute.
RECONCILE_LOCK_TTL = 50


def reconcile_lock(sale_id: int) -> str:
    return f"{_sale(sale_id)}:reconcile-lock"


def sale_cache_lock(sale_id: int) -> str:
    """Held (owner token) by the one process reading a sale's cache entry from PostgreSQL."""
    return f"{_sale(sale_id)}:cache-lock"


def sms_code(mobile: str, purpose: str) -> str:
    """Hash {code, checks} of the code last sent to `mobile` for `purpose` (SMS_CODE_TTL)."""
    return f"{PREFIX}sms:{{{mobile}}}:code:{purpose}"


def sms_resend(mobile: str, requester: str) -> str:
    """Present while `requester` may not have another message sent to `mobile` (SMS_RESEND_SECONDS)."""
    return f"{PREFIX}sms:{{{mobile}}}:resend:{requester}"


def sms_day(mobile: str, requester: str) -> str:
    """Messages `requester` had sent to `mobile` in the day since the first (SMS_DAY_SECONDS)."""
    return f"{PREFIX}sms:{{{mobile}}}:day:{requester}"


def sms_number_day(mobile: str) -> str:
    """Messages sent to `mobile` by anyone in the day since the first (SMS_DAY_SECONDS)."""
    return f"{PREFIX}sms:{{{mobile}}}:day"


def sms_known(mobile: str) -> str:
    """Set of the requesters that entered a code sent to `mobile` (SMS_KNOWN_TTL)."""
    return f"{PREFIX}sms:{{{mobile}}}:known"


def sms_ip(requester: str) -> str:
    """Messages asked for by one requester (client IP, IPv6 /64) this hour (SMS_IP_WINDOW)."""
    return f"{PREFIX}sms:ip:{requester}"


def sms_shop_hour(hour: int) -> str:
    """Messages the whole shop sent in one epoch hour (SMS_SHOP_HOUR_TTL)."""
    return f"{PREFIX}sms:shop:{hour}"


def registrations(hour: int) -> str:
    """Sorted set client IP -> accounts registered in that hour (epoch hour; REGISTRATIONS_TTL)."""
    return f"{PREFIX}users:registrations:{hour}"


# Keys read and written through Django's cache, which adds its own KEY_PREFIX (settings).


def sale_cache(sale_id: int) -> str:
    """(fresh until, by Redis's clock; the sale's row). "v2": the entry used to be the bare
    row, and during a rolling deploy old and new processes must not read each other's."""
    return f"goods:sale:v2:{sale_id}"


def sale_missing(sale_id: int) -> str:
    return f"goods:sale-missing:{sale_id}"


def goods_list_html(language: str) -> str:
    """The cached list page, one per language (it is the same for every user of a language)."""
    return f"goods:list:html:{language}"


# Keys of the raw client.


def goods_list_lock(language: str) -> str:
    return f"{PREFIX}goods:list:lock:{language}"


def auth_epoch(user_id: int) -> str:
    """The user's auth epoch (no TTL: one short string per user whose credentials were ever
    revoked): a random value rewritten by users.services.user_auth_revoke. Sessions hold the
    value they were made under; the user's hash tag is the one their session keys carry
    (users.sessions), so the session and the epoch are read in one round trip."""
    return f"{PREFIX}auth:{{u{user_id}}}:epoch"


def api_token(token_hash: str) -> str:
    """API token (sha256 of it: a dump or MONITOR never shows usable tokens) -> user id;
    TTLs in seckill_site/api.py."""
    return f"{PREFIX}api:token:{token_hash}"
