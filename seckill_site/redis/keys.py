"""Every Redis key the shop uses outside a sale's own state, built in one place with its
lifetime beside it. A sale's keys (`sk:{id}:*`) belong to goods.sale_state, which alone
names them.

Every key starts with settings.REDIS_KEY_PREFIX ("" in production): a test run gets a prefix
of its own and deletes only its own keys, so it never needs FLUSHDB (a cluster, or a server
shared with others, must not be flushed). The prefix stands before any hash tag, so keys that
share a tag still share a slot.
"""

import random

from django.conf import settings

PREFIX: str = settings.REDIS_KEY_PREFIX


def jittered(seconds: float) -> int:
    """`seconds` plus up to a fifth more, at random, for every cache entry's TTL: entries
    written together (a warm-up, a deploy, one burst) then expire apart, not in one second."""
    return int(seconds + random.uniform(0, seconds / 5))


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
# The cached list page, ~60 s plus jitter (settings.GOODS_LIST_CACHE_SECONDS), and the
# mutex (owner token, compare-and-delete release) that lets one request render it while the
# others wait.
GOODS_LIST_LOCK_TTL = 5


def sale_cache_lock(sale_id: int) -> str:
    """Held (owner token) by the one process reading a sale's cache entry from PostgreSQL."""
    return f"{PREFIX}goods:sale-cache-lock:{sale_id}"


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


# Captchas drawn ahead of the opening (seckill.services.paths): a list of "answer\nPNG" entries,
# each taken once. Every fill renews its lifetime, so a pool nobody fills any more (the feature
# turned off, a new drawing after a deploy) is gone within the hour.
CAPTCHA_POOL_TTL = 60 * 60


def captcha_pool() -> str:
    return f"{PREFIX}seckill:captcha-pool"


def registrations(hour: int) -> str:
    """Sorted set client IP -> accounts registered in that hour (epoch hour; REGISTRATIONS_TTL)."""
    return f"{PREFIX}users:registrations:{hour}"


# Keys read and written through Django's cache, which adds its own KEY_PREFIX (settings).


def sale_cache(sale_id: int) -> str:
    """(fresh until, by Redis's clock; the sale's row). "v2": the entry used to be the bare
    row, and during a rolling deploy old and new processes must not read each other's."""
    return f"goods:sale:v2:{sale_id}"


def draw_public(sale_id: int) -> str:
    """A made draw's published lists (seed, entrant and winner ids): they never change, and
    may be megabytes, so PostgreSQL serves them once (cache key, not a raw Redis key)."""
    return f"seckill:draw-public:v1:{sale_id}"


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
    revoked): a random value rewritten by users.revocation.user_auth_revoke. Sessions hold the
    value they were made under; the user's hash tag is the one their session keys carry
    (users.sessions), so the session and the epoch are read in one round trip."""
    return f"{PREFIX}auth:{{u{user_id}}}:epoch"


def api_token(token_hash: str) -> str:
    """API token (sha256 of it: a dump or MONITOR never shows usable tokens) -> user id;
    TTLs in seckill_site/api.py."""
    return f"{PREFIX}api:token:{token_hash}"
