"""Shoppers, sales and one-time paths for the bench, made through the product's own services.

Runs in the bench command's Django process, against the same PostgreSQL and Redis as the
deployment. Everything it creates is tagged (mobile prefix, goods name) and removed by
`cleanup` at the end.
"""

from __future__ import annotations

import multiprocessing
import time
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from datetime import timedelta

from django.contrib.auth.hashers import make_password
from django.contrib.sessions.backends.cache import KEY_PREFIX as SESSION_KEY_PREFIX
from django.core.cache import caches
from django.db import connections, transaction
from django.utils import timezone
from rest_framework.authtoken.models import Token

from goods.models import Goods
from lab.shopper import Shopper, path_solve
from lab.shopper import shoppers_create as lab_shoppers_create
from orders.models import Order, SeckillOrder
from sales import sale_state
from sales.models import DRAW_WINDOW_NONE, Admission, Sale
from sales.services import draw_seed_ensure, goods_list_cache_drop, sale_cache_drop, sale_open
from users.middleware import REFRESHED_AT
from users.models import User
from users.sessions import SessionStore
from users.tokens import api_token_revoke

MOBILE_PREFIX = "16"  # bench shoppers: 16xxxxxxxxx
MERCHANT_MOBILE = "16999999999"
GOODS_PREFIX = "bench:"
SHOPPER_NICKNAME = "bench shopper "


@dataclass
class Sales:
    burst: list[int]  # one sale per repetition of the burst
    sold_out: int
    naive: int
    api_burst: list[int]
    warmup: int
    stock: int
    warmup_stock: int
    extra: list[int] = field(default_factory=list)  # the hot-row and drain sales, made later

    @property
    def ids(self) -> list[int]:
        return [*self.burst, self.sold_out, self.naive, *self.api_burst, self.warmup, *self.extra]


def sale_create(*, name: str, units: int, starts_in: timedelta = timedelta(minutes=-1), draw: bool = False) -> Sale:
    """A bench sale, open from `starts_in` from now (a minute ago) for two hours, its Redis keys warmed.
    `draw`: a draw taking entries from now until its start (`starts_in` must be ahead), drawn then."""
    owner, _ = User.objects.get_or_create(mobile=MERCHANT_MOBILE, defaults={"is_staff": True, "nickname": "bench"})
    goods = Goods.objects.create(
        owner=owner, name=f"{GOODS_PREFIX}{name} {time.strftime('%H%M%S')}", title=f"Bench {name}", price=999,
        stock=units,
    )  # fmt: skip
    now = timezone.now()
    admission = {"admission": Admission.DRAW, "draw_window_s": DRAW_WINDOW_NONE, "entries_open_at": now} if draw else {}
    sale = Sale.objects.create(
        goods=goods,
        seckill_price=1,
        stock_count=units,
        start_at=now + starts_in,
        end_at=now + starts_in + timedelta(hours=2, minutes=1),
        **admission,
    )
    if draw:
        draw_seed_ensure(sale=sale)  # before it is loaded: its draw is scheduled then
    sale_open(sale_id=sale.pk)
    return sale


def sales_create(*, stock: int, warmup_stock: int, bursts: int) -> Sales:
    sales = [
        *((f"burst#{n}", stock) for n in range(1, bursts + 1)),
        ("sold-out", 0),
        ("naive", stock),
        *((f"api-burst#{n}", stock) for n in range(1, bursts + 1)),
        ("warm-up", warmup_stock),
    ]
    ids = [sale_create(name=name, units=units).pk for name, units in sales]
    return Sales(
        burst=ids[:bursts],
        sold_out=ids[bursts],
        naive=ids[bursts + 1],
        api_burst=ids[bursts + 2 : 2 * bursts + 2],
        warmup=ids[-1],
        stock=stock,
        warmup_stock=warmup_stock,
    )


def _next_mobile() -> int:
    last = User.objects.filter(mobile__startswith=MOBILE_PREFIX).exclude(mobile=MERCHANT_MOBILE).order_by("-mobile")
    return int(last.values_list("mobile", flat=True).first() or f"{MOBILE_PREFIX}000000000") + 1


def users_create(*, count: int) -> list[int]:
    """`count` shoppers with no session or token (the drain's buyers go through the gate's
    service, not HTTP); removed like the others."""
    start, password = _next_mobile(), make_password(None)
    users = User.objects.bulk_create(
        [User(mobile=str(start + i), nickname=f"{SHOPPER_NICKNAME}{i}", password=password) for i in range(count)],
        batch_size=2000,
    )
    return [user.pk for user in users]


def shoppers_create(*, count: int, secret_key: str, progress) -> list[Shopper]:
    """`count` new shoppers, each with a session and an API token, tagged for `cleanup`."""
    return lab_shoppers_create(
        count=count,
        mobile_first=_next_mobile(),
        nickname=SHOPPER_NICKNAME,
        secret_key=secret_key,
        tokens=True,
        progress=progress,
    )


def _paths(args: tuple[list[tuple[int, str]], int]) -> list[str]:
    shoppers, sale_id = args
    paths = []
    now = int(time.time())
    for user_id, session_key in shoppers:
        path = path_solve(sale_id=sale_id, user_id=user_id)
        if path is None:
            raise RuntimeError(f"captcha answer refused for user {user_id}")
        paths.append(path)
        # A real shopper's captcha and path requests, seconds before the buy, leave a session
        # slid within the last minute (users.middleware), so the buy does not re-save it.
        # Stand in for them: the buy must find a mark at most ~30 s old.
        session = SessionStore(session_key)
        if now - session.get(REFRESHED_AT, 0) >= 30:
            session[REFRESHED_AT] = now
            session.save()
    return paths


def paths_create(*, shoppers: list[Shopper], sale_id: int, processes: int = 2) -> list[str]:
    """One fresh one-time path per shopper (they live 60 s: make them just before use).
    Drawing the captcha images is CPU work, so it is spread over `processes` processes."""
    connections.close_all()  # forked children must not share the parent's sockets
    pairs = [(shopper.user_id, shopper.session) for shopper in shoppers]
    chunk = -(-len(pairs) // processes)
    parts = [(pairs[i : i + chunk], sale_id) for i in range(0, len(pairs), chunk)]
    with ProcessPoolExecutor(processes, mp_context=multiprocessing.get_context("fork")) as pool:
        return [path for part in pool.map(_paths, parts) for path in part]


def paths_keep_alive(*, sale_id: int, paths: dict[int, str]) -> None:
    """Give the shoppers' one-time paths of the sale (user id -> path) their whole lifetime again."""
    for user_id, path in paths.items():
        sale_state.path_set(sale_id=sale_id, user_id=user_id, path=path)


def cleanup(*, sales: Sales | None, shoppers: list[Shopper], user_ids: list[int] = ()) -> None:
    """Remove everything the bench created: orders, sales, goods, shoppers, sessions, Redis keys."""
    _remove(sale_ids=sales.ids if sales else [], user_ids=[*(shopper.user_id for shopper in shoppers), *user_ids])
    sessions = [SESSION_KEY_PREFIX + shopper.session for shopper in shoppers]
    for start in range(0, len(sessions), 1000):
        caches["default"].delete_many(sessions[start : start + 1000])


def leftovers_remove() -> int:
    """Remove what an earlier run left behind when it was killed before its cleanup; their
    sessions expire by themselves. Returns how many sales and shoppers were removed."""
    sale_ids = list(Sale.objects.filter(goods__name__startswith=GOODS_PREFIX).values_list("pk", flat=True))
    user_ids = list(
        User.objects.filter(mobile__startswith=MOBILE_PREFIX, nickname__startswith=SHOPPER_NICKNAME).values_list(
            "pk", flat=True
        )
    )
    _remove(sale_ids=sale_ids, user_ids=user_ids)
    return len(sale_ids) + len(user_ids)


def _remove(*, sale_ids: list[int], user_ids: list[int]) -> None:
    tokens = list(Token.objects.filter(user_id__in=user_ids).values_list("key", flat=True))
    with transaction.atomic():
        order_ids = list(Order.objects.filter(sale_id__in=sale_ids).values_list("pk", flat=True))
        SeckillOrder.objects.filter(sale_id__in=sale_ids).delete()
        Order.objects.filter(pk__in=order_ids).delete()
        goods_ids = list(Sale.objects.filter(pk__in=sale_ids).values_list("goods_id", flat=True))
        Sale.objects.filter(pk__in=sale_ids).delete()
        Goods.objects.filter(pk__in=goods_ids).delete()
        for start in range(0, len(user_ids), 1000):
            User.objects.filter(pk__in=user_ids[start : start + 1000]).delete()
    for sale_id in sale_ids:
        sale_state.sale_forget(sale_id=sale_id)
        sale_cache_drop(sale_id=sale_id)
    goods_list_cache_drop()
    for key in tokens:
        api_token_revoke(key=key)
