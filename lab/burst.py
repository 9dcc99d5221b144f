"""A bounded buy burst against a running `make run` (loopback only): do connections survive?

    python -m lab.burst [--url http://127.0.0.1:8000] [--requests 200] [--connections 64]

Prepares `--requests` shoppers on the same database and Redis as the server (a Redis
session and a solved one-time path each, through the real services) on a new sale, then
sends their doSeckill POSTs from `--connections` threads released together, each request on
a new connection (a crowd arriving at once). Prints the HTTP statuses, the envelope codes
and every broken connection (reset, refused, timed out); exits 1 if any broke.
"""

from __future__ import annotations

import argparse
import collections
import http.client
import json
import os
import secrets
import sys
import threading
import time
from urllib.parse import urlsplit


def prepare(count: int) -> tuple[int, list[tuple[str, str]]]:
    """A new sale with `count` units on now, and (session key, path) for `count` new shoppers."""
    import django

    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "seckill_site.settings.local")
    django.setup()
    from datetime import timedelta
    from decimal import Decimal

    from django.utils import timezone

    from goods.models import Goods
    from lab.shopper import path_solve, shoppers_create
    from sales.models import Sale
    from sales.services import sale_create
    from users.models import User

    owner = User.objects.filter(is_staff=True).order_by("pk").first() or User.objects.create_user(
        f"139{secrets.randbelow(10**8):08d}", "burst-owner", is_staff=True
    )
    goods = Goods.objects.create(owner=owner, name="Burst", title="lab.burst", price=Decimal("10"), stock=count)
    now = timezone.now()
    sale = Sale(
        goods=goods, seckill_price=Decimal("1"), stock_count=count, start_at=now, end_at=now + timedelta(hours=1)
    )
    sale_create(sale=sale, actor=owner)
    first = int(f"16{secrets.randbelow(10**3):03d}000000")
    shoppers = [
        (shopper.session, path_solve(sale_id=sale.pk, user_id=shopper.user_id))
        for shopper in shoppers_create(count=count, mobile_first=first, nickname="burst ")
    ]
    return sale.pk, shoppers


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--url", default="http://127.0.0.1:8000")
    parser.add_argument("--requests", type=int, default=200)
    parser.add_argument("--connections", type=int, default=64)
    args = parser.parse_args(argv)
    target = urlsplit(args.url)
    if target.hostname not in ("127.0.0.1", "localhost", "::1"):
        parser.error("loopback only: this is a burst, not a load test of someone else's server")

    sale_id, shoppers = prepare(args.requests)
    work = collections.deque(shoppers)
    statuses: collections.Counter = collections.Counter()
    codes: collections.Counter = collections.Counter()
    broken: list[str] = []
    lock = threading.Lock()
    start = threading.Barrier(args.connections)

    def run() -> None:
        start.wait()
        while True:
            with lock:
                if not work:
                    return
                session_key, path = work.popleft()
            csrf = secrets.token_hex(16)
            body = f"goodsId={sale_id}"
            try:
                connection = http.client.HTTPConnection(target.hostname, target.port or 80, timeout=30)
                connection.request(
                    "POST",
                    f"/seckill/{path}/doSeckill",
                    body=body,
                    headers={
                        "Content-Type": "application/x-www-form-urlencoded",
                        "Cookie": f"sessionid={session_key}; csrftoken={csrf}",
                        "X-CSRFToken": csrf,
                        "Accept": "application/json",
                        "Connection": "close",
                    },
                )
                response = connection.getresponse()
                payload = response.read()
                connection.close()
                with lock:
                    statuses[response.status] += 1
                    try:
                        codes[json.loads(payload)["code"]] += 1
                    except (ValueError, KeyError):
                        codes["not json"] += 1
            except (OSError, http.client.HTTPException) as error:
                with lock:
                    broken.append(f"{type(error).__name__}: {error}")

    threads = [threading.Thread(target=run) for _ in range(args.connections)]
    started = time.monotonic()
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    seconds = time.monotonic() - started
    print(f"{args.requests} buy requests, {args.connections} connections at once, {seconds:.2f} s")
    print(f"HTTP statuses: {dict(statuses)}; envelope codes: {dict(codes)}")
    print(f"broken connections: {len(broken)}")
    for line in collections.Counter(broken).most_common(5):
        print(f"  {line[1]} x {line[0]}")
    return 1 if broken else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
