"""The captcha and the one-time path: what earns a shopper one try at the gate."""

import logging
import secrets
import time

from django.conf import settings

from sales import sale_state
from seckill import captcha, keys
from seckill.metrics import CAPTCHAS_SERVED
from seckill_site.redis import client

logger = logging.getLogger(__name__)


class SaleLimitReached(Exception):
    """A shopper drew too many captchas or tried too many answers for one sale this minute."""

    def __init__(self, *, action: str, limit: int, retry_after: int) -> None:
        super().__init__(f"{action}: more than {limit} per minute")
        self.action = action
        self.limit = limit
        self.retry_after = retry_after


# action -> the setting that holds its per-minute limit
SALE_LIMITS = {"captcha": "SECKILL_CAPTCHAS_PER_MINUTE", "path": "SECKILL_PATHS_PER_MINUTE"}


def sale_limit_take(*, sale_id: int, user_id: int, action: str) -> None:
    """Count one `action` of this shopper on this sale; raise SaleLimitReached over the limit.

    Unlike the rate limits, this stops a script that paces itself from drawing captchas until its
    OCR gets one right. The count is in Redis, shared by every web node."""
    limit = getattr(settings, SALE_LIMITS[action])
    retry_after = sale_state.limit_take(sale_id=sale_id, user_id=user_id, action=action, limit=limit)
    if retry_after:
        raise SaleLimitReached(action=action, limit=limit, retry_after=retry_after)


def captcha_create(*, user_id: int, sale_id: int) -> bytes:
    """A new captcha (PNG) whose answer replaces any earlier one; SaleLimitReached past the limit."""
    sale_limit_take(sale_id=sale_id, user_id=user_id, action="captcha")
    drawn = captcha_pool_take()
    if drawn is None:
        drawn = _captcha_draw()
        CAPTCHAS_SERVED.labels("drawn").inc()
    else:
        CAPTCHAS_SERVED.labels("pool").inc()
    answer, png = drawn
    sale_state.captcha_answer_set(sale_id=sale_id, user_id=user_id, answer=answer)
    return png


def _captcha_draw() -> tuple[int, bytes]:
    """(answer, PNG) of a new captcha."""
    expression = captcha.expression_new()
    return captcha.expression_value(expression), captcha.image_png(expression)


def captcha_audio_create(*, user_id: int, sale_id: int) -> bytes:
    """The spoken captcha (WAV): as captcha_create, under the same limit."""
    sale_limit_take(sale_id=sale_id, user_id=user_id, action="captcha")
    digits = captcha.audio_answer_new()
    sale_state.captcha_answer_set(sale_id=sale_id, user_id=user_id, answer=int(digits))
    return captcha.audio_wav(digits)


def path_create(*, user_id: int, sale_id: int, answer: int) -> str | None:
    """A one-time path for a right captcha answer, else None. Any try consumes the answer, so it
    cannot be guessed in a loop; past the limit SaleLimitReached, and the answer is left alone."""
    sale_limit_take(sale_id=sale_id, user_id=user_id, action="path")
    if sale_state.captcha_answer_take(sale_id=sale_id, user_id=user_id) != answer:
        return None
    path = secrets.token_hex(16)
    sale_state.path_set(sale_id=sale_id, user_id=user_id, path=path)
    return path


# Captchas drawn ahead by beat and `seckill_warm`, so shoppers do not pay for drawing theirs in
# the opening seconds (docs/performance.md). An entry is taken once (LPOP) and bound to its
# shopper and sale only then; an empty pool falls back to drawing.


def captcha_pool_take() -> tuple[int, bytes] | None:
    """(answer, PNG) of a captcha drawn ahead, removed from the pool; None when it is empty."""
    if settings.SECKILL_CAPTCHA_POOL <= 0:
        return None
    entry = client().lpop(keys.captcha_pool())
    if not isinstance(entry, bytes):  # empty (None)
        return None
    answer, _, png = entry.partition(b"\n")
    try:
        return int(answer), png
    except ValueError:  # not one of ours: draw instead
        logger.warning("an entry of the captcha pool is not 'answer\\nPNG': dropped")
        return None


def captcha_pool_clear() -> int:
    """Drop every captcha drawn ahead (after a change of fonts or size); how many there were."""
    redis, key = client(), keys.captcha_pool()
    count = redis.llen(key)
    redis.delete(key)
    return count


def captcha_pool_fill(*, size: int | None = None, seconds: float | None = None) -> int:
    """Draw captchas into the pool until it holds `size` or `seconds` have passed; the number
    drawn. Concurrent fillers may overdraw, so the pool is trimmed back to `size`."""
    size = settings.SECKILL_CAPTCHA_POOL if size is None else size
    if size <= 0:
        return 0
    redis, key = client(), keys.captcha_pool()
    missing = size - redis.llen(key)
    if missing < 0:  # the size was lowered, or two fillers overdrew
        redis.ltrim(key, 0, size - 1)
    deadline = None if seconds is None else time.monotonic() + seconds
    drawn, batch = 0, []
    while drawn < missing and (deadline is None or time.monotonic() < deadline):
        batch.append(b"%d\n%s" % _captcha_draw())
        drawn += 1
        if len(batch) == 50:
            _captcha_pool_push(key, batch, size)
            batch = []
    if batch:
        _captcha_pool_push(key, batch, size)
    return drawn


def _captcha_pool_push(key: str, entries: list[bytes], size: int) -> None:
    pipeline = client().pipeline(transaction=False)
    pipeline.rpush(key, *entries)
    pipeline.ltrim(key, 0, size - 1)
    pipeline.expire(key, keys.CAPTCHA_POOL_TTL)
    pipeline.execute()
