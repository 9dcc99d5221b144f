"""What the fault suite injects into a sale's state below the services: a solved one-time path,
and a reservation whose flush was lost. The only lab module that names a sale's keys besides the
benchmarks of its scripts (the import-linter contract in pyproject.toml says so); the tests'
shoppers (testutils.shoppers) use it too."""

import time
import uuid

from django.conf import settings

from sales import sale_state
from sales.sale_state import keys
from seckill.services import paths
from seckill_site.redis import client


def path_for(user_id: int, sale_id: int) -> str:
    """Solve the captcha as a person would, reading the answer a test may read from Redis."""
    paths.captcha_create(user_id=user_id, sale_id=sale_id)
    answer = int(client().get(keys.captcha(sale_id, user_id, sale_state.shards(sale_id))))
    path = paths.path_create(user_id=user_id, sale_id=sale_id, answer=answer)
    assert path is not None
    return path


def reserve_directly(user_id: int, sale_id: int, *, request_id: str | None = None, age: float = 0) -> tuple[int, str]:
    """The gate's reserve script alone, with a freshly solved path and without the broker:
    (units left, or a refusal's negative number, request id). `age` back-dates the
    reservation, as if its flush had been lost that many seconds ago."""
    request_id = request_id or uuid.uuid4().hex
    path = path_for(user_id, sale_id)
    reserved = sale_state.reserve(
        sale_id=sale_id,
        user_id=user_id,
        path=path,
        request_id=request_id,
        trace="",
        flush_mark_ms=settings.SECKILL_WRITER_FLUSH_MARK_MS,
    )
    left = reserved.left if reserved.refusal is None else int(reserved.refusal)
    if left >= 0 and age:
        client().hset(keys.reservations(sale_id), request_id, f"{user_id}:{int(time.time() - age)}")
    return left, request_id
