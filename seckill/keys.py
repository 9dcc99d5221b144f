"""The seckill app's own Redis key: the captcha pool. A sale's keys are sales.sale_state's."""

from seckill_site.redis.keys import PREFIX

# Captchas drawn ahead (seckill.services.paths); every fill renews the TTL, so an unfed pool expires.
CAPTCHA_POOL_TTL = 60 * 60


def captcha_pool() -> str:
    return f"{PREFIX}seckill:captcha-pool"
