"""Every Redis key the shop uses, built in one place with its lifetime beside it.

Keys of one sale share the hash tag `{sale_id}` so that a Lua script touching several of
them stays valid on Redis Cluster (all keys of one call must live in one slot).
"""

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
# Text-message codes (users.verification): a code lives 5 minutes and allows 5 checks; one
# message per number per minute, 5 per number per day, and SMS_SENDS_PER_IP_PER_HOUR per
# client IP. Keys of one number share its hash tag, so the Lua script stays in one slot.
SMS_CODE_TTL = 5 * 60
SMS_CODE_MAX_CHECKS = 5
SMS_RESEND_SECONDS = 60
SMS_DAY_SECONDS = 24 * 60 * 60
SMS_SENDS_PER_DAY = 5
SMS_IP_WINDOW = 60 * 60
# Accounts registered per client IP per hour, for the admin; kept a week.
REGISTRATIONS_TTL = 7 * 24 * 60 * 60
# Cached item data for the detail JSON and the gate's sale window.
SALE_CACHE_TTL = 30
# A miss for an unknown sale id is remembered briefly so repeated misses skip PostgreSQL.
SALE_MISSING_TTL = 30
# Rebuild lock after Redis lost a sale's keys: one process rebuilds, others answer "busy".
SALE_REBUILD_LOCK_TTL = 10
# The cached list page, ~60 s plus jitter (settings.GOODS_LIST_CACHE_SECONDS), and the
# mutex that lets one request render it while the others wait.
GOODS_LIST_LOCK_TTL = 5


def _sale(sale_id: int) -> str:
    return f"sk:{{{sale_id}}}"


def stock(sale_id: int) -> str:
    """Units left to hand out (no TTL: rebuilt from the database by seckill_warm)."""
    return f"{_sale(sale_id)}:stock"


def buyers(sale_id: int) -> str:
    """Set of user ids holding a unit of this sale (no TTL)."""
    return f"{_sale(sale_id)}:buyers"


def reservations(sale_id: int) -> str:
    """Hash request_id -> "user_id:epoch_seconds" for units handed out but not yet written (no TTL)."""
    return f"{_sale(sale_id)}:reservations"


def window(sale_id: int) -> str:
    """Hash {start, end} in epoch seconds: the gate's sale window (no TTL, rewritten by warm)."""
    return f"{_sale(sale_id)}:window"


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


def sms_code(mobile: str, purpose: str) -> str:
    """Hash {code, checks} of the code last sent to `mobile` for `purpose` (SMS_CODE_TTL)."""
    return f"sms:{{{mobile}}}:code:{purpose}"


def sms_resend(mobile: str) -> str:
    """Present while `mobile` may not get another message (SMS_RESEND_SECONDS)."""
    return f"sms:{{{mobile}}}:resend"


def sms_day(mobile: str) -> str:
    """Messages sent to `mobile` in the day since the first (SMS_DAY_SECONDS)."""
    return f"sms:{{{mobile}}}:day"


def sms_ip(ip: str) -> str:
    """Messages requested from one client IP this hour (SMS_IP_WINDOW)."""
    return f"sms:ip:{ip}"


def registrations(hour: int) -> str:
    """Sorted set client IP -> accounts registered in that hour (epoch hour; REGISTRATIONS_TTL)."""
    return f"users:registrations:{hour}"


def sale_cache(sale_id: int) -> str:
    return f"goods:sale:{sale_id}"


def sale_missing(sale_id: int) -> str:
    return f"goods:sale-missing:{sale_id}"


def goods_list_html(language: str) -> str:
    """The cached list page, one per language (it is the same for every user of a language)."""
    return f"goods:list:html:{language}"


def goods_list_lock(language: str) -> str:
    return f"goods:list:lock:{language}"


# Order numbers: time prefix + this counter (no TTL); see orders.services.order_number_next.
ORDER_SEQUENCE = "orders:sequence"
