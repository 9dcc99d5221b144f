"""Every Redis key the shop uses outside a sale's own state (sales.sale_state's), with its
lifetime beside it. Each starts with settings.REDIS_KEY_PREFIX ("" in production), before any
hash tag, so a test run deletes only its own keys and never needs FLUSHDB."""

import random

from django.conf import settings

PREFIX: str = settings.REDIS_KEY_PREFIX


def jittered(seconds: float) -> int:
    """`seconds` plus up to a fifth more at random, so entries written together expire apart."""
    return int(seconds + random.uniform(0, seconds / 5))


# Text-message codes (users.verification), in seconds and counts; resend and day limits are per
# number and requester. A number's keys share its hash tag, so its Lua scripts stay in one slot.
SMS_CODE_TTL = 5 * 60
SMS_CODE_MAX_CHECKS = 5
SMS_RESEND_SECONDS = 60
SMS_DAY_SECONDS = 24 * 60 * 60
SMS_SENDS_PER_DAY = 5
SMS_IP_WINDOW = 60 * 60
SMS_KNOWN_TTL = 30 * 24 * 60 * 60
# The shop's hourly count lives two hours, so the hour just ended can still be read.
SMS_SHOP_HOUR_TTL = 2 * 60 * 60
REGISTRATIONS_TTL = 7 * 24 * 60 * 60
# A sale's cached row (seconds): fresh, then served stale while the lock's holder re-reads it.
SALE_CACHE_TTL = 30
SALE_CACHE_STALE_TTL = 30
# Past that, kept only for when PostgreSQL cannot answer (a failover): an edit drops the row, so
# the kept copy is the last one committed; once served so, it is fresh again this long.
SALE_CACHE_KEEP_TTL = 60 * 60
SALE_CACHE_RETRY_SECONDS = 2
SALE_CACHE_LOCK_TTL = 5
# A miss for an unknown sale id is remembered briefly (jittered) so repeated misses skip PostgreSQL.
SALE_MISSING_TTL = 30
GOODS_LIST_LOCK_TTL = 5


def sale_cache_lock(sale_id: int) -> str:
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


# Captchas drawn ahead (seckill.services.paths); every fill renews the TTL, so an unfed pool expires.
CAPTCHA_POOL_TTL = 60 * 60


def captcha_pool() -> str:
    return f"{PREFIX}seckill:captcha-pool"


def registrations(hour: int) -> str:
    """Sorted set client IP -> accounts registered in that hour (epoch hour; REGISTRATIONS_TTL)."""
    return f"{PREFIX}users:registrations:{hour}"


# Keys read and written through Django's cache, which adds its own KEY_PREFIX (settings).


def sale_cache(sale_id: int) -> str:
    """(fresh until, by Redis's clock; the row). "v2": a rolling deploy's old processes read v1."""
    return f"goods:sale:v2:{sale_id}"


def draw_public(sale_id: int) -> str:
    """A made draw's published lists: never changing and maybe megabytes, read once from PostgreSQL."""
    return f"seckill:draw-public:v1:{sale_id}"


def draw_summary(sale_id: int) -> str:
    """(fresh until, by Redis's clock; a draw's public summary, no entrant list), for the item
    page's refresh every few seconds. "v2": a rolling deploy's old processes read v1."""
    return f"seckill:draw-summary:v2:{sale_id}"


def draw_entry(sale_id: int, user_id: int) -> str:
    """A shopper's place in a made draw's entrant list: never changing once drawn."""
    return f"seckill:draw-entry:v1:{sale_id}:{user_id}"


def sale_missing(sale_id: int) -> str:
    return f"goods:sale-missing:{sale_id}"


def goods_list_html(language: str) -> str:
    return f"goods:list:html:{language}"


def goods_list_rows() -> str:
    """The list's rows and units offered as PostgreSQL last gave them (sales.selectors.sales_for_list)."""
    return "goods:list:rows:v1"


# Keys of the raw client.


def goods_list_lock(language: str) -> str:
    return f"{PREFIX}goods:list:lock:{language}"


def auth_epoch(user_id: int) -> str:
    """The user's auth epoch (no TTL), rewritten by users.revocation.user_auth_revoke. It shares
    the hash tag of the user's session keys, so both are read in one round trip."""
    return f"{PREFIX}auth:{{u{user_id}}}:epoch"


def api_token(token_hash: str) -> str:
    """sha256 of an API token (so a dump shows none usable) -> user id."""
    return f"{PREFIX}api:token:{token_hash}"
