"""Reservations as fast as the gate's service hands them out, for the drain measurement.

    python -m lab.bench.reserve SALE_ID USER_IDS_FILE OUTPUT.json

Run by the bench with the deployment's environment (lab.bench.settings), so the reservations are
published exactly as a web process publishes them, to the same queue. Each shopper gets a
one-time path stored as `seckill.services.path_create` stores it (the captcha is not the
figure here), then `seckill_attempt` runs for every shopper in turn: one process is one gate
thread without HTTP. The bench runs a few of these side by side.
"""

from __future__ import annotations

import json
import os
import secrets
import sys
import time
from collections import Counter

CHUNK = 500  # paths are set this many at a time, just before use (they live 60 s)


def main(argv: list[str]) -> int:
    sale_id, output = int(argv[0]), argv[2]
    with open(argv[1]) as file:
        user_ids = [int(line) for line in file if line.strip()]
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "lab.bench.settings")
    import django

    django.setup()
    from sales.sale_state import keys
    from seckill.services.gate import seckill_attempt
    from seckill_site.redis import client

    redis = client()
    codes: Counter[str] = Counter()
    started = time.time()
    for start in range(0, len(user_ids), CHUNK):
        paths = {user: secrets.token_hex(16) for user in user_ids[start : start + CHUNK]}
        pipeline = redis.pipeline(transaction=False)
        for user, path in paths.items():
            pipeline.set(keys.path(sale_id, user), path, ex=keys.PATH_TTL)
        pipeline.execute()
        for user, path in paths.items():
            attempt = seckill_attempt(user_id=user, sale_id=sale_id, path=path)
            codes[str(attempt.code.code)] += 1
    ended = time.time()
    with open(output, "w") as file:
        json.dump({"started": started, "ended": ended, "codes": dict(codes)}, file)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
