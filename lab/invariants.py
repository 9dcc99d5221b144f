"""The shop's invariants for one sale, checked from outside once its queue has drained.

docs/architecture.md, "Invariants": never oversold; at most one live order per shopper and
sale; nothing stranded (the orders and the stock left add up to the sale's units, Redis agrees
with the database, no reservation waits); every shopper told "queued" is answered with their
order or a clear -1; and the money's (orders.payments.reconcile.money_check) over the sale's
orders. Every experiment checks them here, through the shop's own reads: its models, the sale
state's public reads, the reconciler in check mode and the answer a shopper polls.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field


@dataclass
class SaleCheck:
    sale_id: int
    units: int  # what the sale started with
    orders: int = 0  # live orders
    db_stock: int = 0
    redis_stock: int | None = None  # None: Redis does not hold the sale
    reservations: int = 0  # waiting for the writer
    duplicates: int = 0  # shoppers with more than one live order
    drifted: bool = False  # the reconciler, checking, finds Redis and the database apart
    queued: int = 0  # shoppers told "queued"
    lost: int = 0  # told "queued", then neither an order nor -1
    told_failed: int = 0  # told "queued", then -1 (Redis had run ahead of the database)
    unanswered: int = 0  # holders of a live order whose polled answer is not that order
    money: list[str] = field(default_factory=list)  # the money invariants broken (reconcile.money_check)
    order_ids: set[int] = field(default_factory=set)

    @property
    def oversold(self) -> int:
        return max(0, self.orders - self.units) + max(0, -self.db_stock)

    @property
    def stranded(self) -> int:
        redis_stock = -1 if self.redis_stock is None else self.redis_stock
        return abs(self.units - self.orders - self.db_stock) + abs(redis_stock - self.db_stock) + self.reservations

    def problems(self) -> list[str]:
        found = []
        if self.oversold:
            found.append(f"oversold by {self.oversold}")
        if self.orders + self.db_stock != self.units:
            found.append(f"orders {self.orders} + database stock {self.db_stock} != units {self.units}")
        if self.redis_stock != self.db_stock:
            found.append(f"stranded: Redis stock {self.redis_stock} != database stock {self.db_stock}")
        if self.reservations:
            found.append(f"stranded: {self.reservations} reservations waiting")
        if self.duplicates:
            found.append(f"{self.duplicates} shoppers with more than one live order")
        if self.drifted:
            found.append("the reconciler finds Redis and the database apart")
        if self.lost:
            found.append(f"{self.lost} shoppers told queued, then neither an order nor -1")
        if self.unanswered:
            found.append(f"{self.unanswered} order holders whose answer is not their order")
        found += [f"money: {problem}" for problem in self.money]
        return found


def reservations_waiting(sale_id: int) -> int:
    from sales import sale_state

    return sale_state.reservations_count([sale_id])[sale_id]


def sale_loaded(sale_id: int) -> bool:
    from sales import sale_state

    return sale_state.stock_left([sale_id])[sale_id] is not None


def sale_check(*, sale_id: int, units: int, queued: Iterable[int] = (), redis: bool = True) -> SaleCheck:
    """The sale's facts now. `queued`: the shoppers told "queued", whose answers are polled.
    Without `redis` (a sale sold past the gate, straight into PostgreSQL) only the database's."""
    from django.db.models import Count

    from orders.models import SeckillOrder
    from orders.payments.reconcile import money_check
    from sales import sale_state
    from sales.models import Sale
    from seckill.selectors import seckill_result
    from seckill.services.reconcile import RESERVATION_STALE_SECONDS, sale_reconcile

    live = SeckillOrder.objects.filter(sale_id=sale_id, live=True)
    check = SaleCheck(sale_id=sale_id, units=units)
    holders = dict(live.values_list("user_id", "order_id"))
    check.orders = live.count()
    check.order_ids = set(holders.values())
    check.db_stock = Sale.objects.get(pk=sale_id).stock_count
    check.duplicates = live.values("user_id").annotate(n=Count("pk")).filter(n__gt=1).count()
    sale_orders = list(SeckillOrder.objects.filter(sale_id=sale_id).values_list("order_id", flat=True))
    check.money = [f"{p.kind} ({p.trade_no})" for p in money_check(orders=sale_orders)]
    if not redis:
        check.redis_stock = check.db_stock
        return check
    check.redis_stock = sale_state.stock_left([sale_id])[sale_id]
    check.reservations = reservations_waiting(sale_id)
    report = sale_reconcile(sale_id=sale_id, repair=False, stale_after=RESERVATION_STALE_SECONDS)
    check.drifted = bool(report.before and report.before.drifted)
    all_ids = set(SeckillOrder.objects.filter(sale_id=sale_id).values_list("order_id", flat=True))
    for user_id in set(queued):
        answer = seckill_result(user_id=user_id, sale_id=sale_id)
        check.queued += 1
        check.lost += answer == 0 or (answer > 0 and answer not in all_ids)
        check.told_failed += answer == -1
    check.unanswered = sum(
        seckill_result(user_id=user_id, sale_id=sale_id) != order_id for user_id, order_id in holders.items()
    )
    return check
