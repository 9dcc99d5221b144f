"""The Redis keys of text-message codes and of registrations, with their lifetimes (seconds,
counts). Resend and day limits are per number and requester. A number's keys share its hash
tag, so its Lua scripts (lua/) stay in one Redis Cluster slot."""

from seckill_site.redis.keys import PREFIX

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
