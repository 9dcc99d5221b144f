"""The captcha and the one-time path: what earns a shopper one try at the gate."""

import secrets

from django.conf import settings

from seckill import captcha
from seckill_site import sale_state


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

    The per-request rate limits stop floods; this stops a script that paces itself from
    drawing captchas all through a sale until its OCR gets one right. Redis holds the count,
    so every web node shares it, and refusals are tallied for the merchant's live view."""
    limit = getattr(settings, SALE_LIMITS[action])
    retry_after = sale_state.limit_take(sale_id=sale_id, user_id=user_id, action=action, limit=limit)
    if retry_after:
        raise SaleLimitReached(action=action, limit=limit, retry_after=retry_after)


def captcha_create(*, user_id: int, sale_id: int) -> bytes:
    """Draw a new captcha for this user and sale; its answer replaces any earlier one.
    Raises SaleLimitReached past SECKILL_CAPTCHAS_PER_MINUTE for this sale."""
    sale_limit_take(sale_id=sale_id, user_id=user_id, action="captcha")
    expression = captcha.expression_new()
    sale_state.captcha_answer_set(sale_id=sale_id, user_id=user_id, answer=captcha.expression_value(expression))
    return captcha.image_png(expression)


def captcha_audio_create(*, user_id: int, sale_id: int) -> bytes:
    """The spoken alternative to the picture (a WAV of digits to type): its answer replaces
    any earlier captcha's, and it counts against the same per-sale captcha limit."""
    sale_limit_take(sale_id=sale_id, user_id=user_id, action="captcha")
    digits = captcha.audio_answer_new()
    sale_state.captcha_answer_set(sale_id=sale_id, user_id=user_id, answer=int(digits))
    return captcha.audio_wav(digits)


def path_create(*, user_id: int, sale_id: int, answer: int) -> str | None:
    """Exchange a right captcha answer for a one-time path. The answer is single-use: any
    attempt, right or wrong, consumes it, so answers cannot be guessed in a loop. Raises
    SaleLimitReached past SECKILL_PATHS_PER_MINUTE tries for this sale (the captcha is then
    left alone)."""
    sale_limit_take(sale_id=sale_id, user_id=user_id, action="path")
    if sale_state.captcha_answer_take(sale_id=sale_id, user_id=user_id) != answer:
        return None
    path = secrets.token_hex(16)
    sale_state.path_set(sale_id=sale_id, user_id=user_id, path=path)
    return path
