"""What the drill finds. The checking process (`python -m lab.restore_drill --verify FACTS --out
VERDICT`, `verify_main`) knows only the restored database: it checks it and Redis against the
original's `Facts` and writes its `Verdict`. The drill adds what it measured (`Measures`), whose
`problems()` are its violations, and prints them as `table`."""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from lab.restore_drill.shop import django_start, order_ids
from lab.restore_drill.workspace import log

# --- what the restored database must hold ---------------------------------------------------------


@dataclass
class Facts:
    """What the original database held, handed to the process that checks the restored one."""

    sale_id: int
    units: int
    before: list[int]  # order ids committed before the target
    after: list[int]  # order ids committed after it
    buyers: list[int]  # the shoppers told "queued", whose answers Redis keeps


@dataclass(frozen=True)
class Comparison:
    """The restored database's orders against the original's; `ok` when it holds exactly the
    orders before the target."""

    found: int  # orders before the target that the restored database holds
    missing: list[int]  # orders before the target that it lacks
    extra: list[int]  # orders it holds that were not there before the target
    after_present: int  # of those, orders committed after the target

    @property
    def ok(self) -> bool:
        return not self.missing and not self.extra


def ids_compare(*, before: Iterable[int], after: Iterable[int], restored: Iterable[int]) -> Comparison:
    """The restored database's order ids against the original's before and after the target:
    a restore to the target holds exactly the ones before it."""
    before, after, restored = set(before), set(after), set(restored)
    return Comparison(len(before & restored), sorted(before - restored), sorted(restored - before),
                      len(after & restored))  # fmt: skip


@dataclass
class Verdict:
    """What the checking process found in the restored database, and in Redis beside it."""

    comparison: dict[str, Any] = field(default_factory=dict)
    orders: int = 0
    db_stock: int = 0
    sale_records_match: bool = False  # every order has its sale record, and no record lacks one
    database_problems: list[str] = field(default_factory=list)
    redis_before: str = ""  # Redis against the restored database, before the reconciler
    redis_problems: list[str] = field(default_factory=list)  # after it
    stale_answers: int = 0  # buyers whose answer in Redis names an order the restored database lacks


def restored_check(facts: Facts) -> Verdict:
    """Check the database this process is set up with (the restored one) against `facts`: the
    orders, the sale's invariants in the database (lab.invariants, without Redis), then Redis
    before and after `manage.py seckill_reconcile --repair`."""
    import io

    from django.core.management import call_command

    from lab.invariants import sale_check
    from orders.models import SeckillOrder
    from seckill.selectors import seckill_result
    from seckill.services.reconcile import sale_reconcile

    verdict = Verdict()
    restored = order_ids(facts.sale_id)
    verdict.comparison = asdict(ids_compare(before=facts.before, after=facts.after, restored=restored))
    records = set(SeckillOrder.objects.filter(sale_id=facts.sale_id).values_list("order_id", flat=True))
    verdict.sale_records_match = records == restored
    database = sale_check(sale_id=facts.sale_id, units=facts.units, redis=False)
    verdict.orders, verdict.db_stock = database.orders, database.db_stock
    verdict.database_problems = database.problems()

    before = sale_reconcile(sale_id=facts.sale_id, repair=False).before
    if before is not None:
        verdict.redis_before = (
            f"Redis stock {before.previous_stock}, database {before.stock}; "
            f"buyers {before.previous_buyers}, database {before.buyers}"
        )
    output = io.StringIO()
    call_command("seckill_reconcile", "--repair", f"--sale={facts.sale_id}", stdout=output)
    log("seckill_reconcile --repair: " + " / ".join(output.getvalue().strip().splitlines()))
    verdict.redis_problems = sale_check(sale_id=facts.sale_id, units=facts.units).problems()
    answers = [seckill_result(user_id=user_id, sale_id=facts.sale_id) for user_id in facts.buyers]
    verdict.stale_answers = sum(answer > 0 and answer not in restored for answer in answers)
    return verdict


def verify_main(facts_path: Path, out_path: Path) -> int:
    """The checking process: DATABASE_URL names the restored database; the verdict goes to `out_path`."""
    django_start({})
    facts = Facts(**json.loads(facts_path.read_text()))
    out_path.write_text(json.dumps(asdict(restored_check(facts)), indent=2))
    return 0


# --- the drill's report ------------------------------------------------------------------------


@dataclass
class Measures:
    """What the drill measured and found, for its table; `problems()` are its violations."""

    postgres: str = ""
    pgbackrest: str = ""
    redis: str = ""
    backup_seconds: float = 0.0
    backup_size: int = 0  # the cluster's files
    backup_stored: int = 0  # in the repository
    wal_segments: int = 0
    wal_failed: int = 0
    wal_stored: int = 0
    restore_seconds: float = 0.0  # pgbackrest restore
    replay_seconds: float = 0.0  # start, replay to the target, promotion
    target_type: str = ""  # time or name
    target: str = ""
    stopped_at: str = ""  # the restored server's log line where recovery stopped
    timeline: int = 0
    before_backup: int = 0
    before: int = 0
    after: int = 0
    answers: dict[str, int] = field(default_factory=dict)
    original_problems: list[str] = field(default_factory=list)
    verdict: Verdict = field(default_factory=Verdict)

    def problems(self) -> list[str]:
        """Every violation, one line each; none when the drill passed."""
        verdict = self.verdict
        found = [f"original: {problem}" for problem in self.original_problems]
        found += [f"restored database: {problem}" for problem in verdict.database_problems]
        found += [f"Redis after the reconciler: {problem}" for problem in verdict.redis_problems]
        comparison = verdict.comparison
        if comparison.get("missing"):
            found.append(f"orders before the target missing: {comparison['missing'][:10]}")
        if comparison.get("extra"):
            found.append(f"orders not there before the target: {comparison['extra'][:10]}")
        if not verdict.sale_records_match:
            found.append("orders and their sale records differ in the restored database")
        if self.wal_failed:
            found.append(f"{self.wal_failed} WAL segments failed to archive")
        return found


def table(measures: Measures) -> str:
    """The drill's figures as the short table it prints."""
    m, verdict, comparison = measures, measures.verdict, measures.verdict.comparison
    ok = "ok" if not m.problems() else "NO"
    rows = [
        ("backup seconds", f"{m.backup_seconds:.1f} (full)"),
        ("backup size", f"{mib(m.backup_size)} of cluster files, {mib(m.backup_stored)} in the repository"),
        ("WAL archived", f"{m.wal_segments} segments, {mib(m.wal_stored)} in the repository, {m.wal_failed} failed"),
        (
            "restore seconds",
            f"{m.restore_seconds + m.replay_seconds:.1f} (files {m.restore_seconds:.1f}, "
            f"start, replay and promotion {m.replay_seconds:.1f})",
        ),
        ("replay target", f"{m.target_type} {m.target}"),
        ("recovery", f"{m.stopped_at}; promoted to timeline {m.timeline}"),
        ("orders", f"{m.before} before the point ({m.before_backup} before the backup), {m.after} after"),
        (
            "found/missing/extra",
            f"{comparison.get('found', 0)}/{len(comparison.get('missing', []))}/"
            f"{len(comparison.get('extra', []))} (after the point present: "
            f"{comparison.get('after_present', 0)})",
        ),
        (
            "restored database",
            f"orders {verdict.orders} + stock {verdict.db_stock}, {'ok' if not verdict.database_problems else 'NO'}",
        ),
        (
            "Redis",
            f"before the reconciler: {verdict.redis_before or 'no sale'}; after: "
            f"{'ok' if not verdict.redis_problems else 'NO'}; stale answers {verdict.stale_answers}",
        ),
        ("invariants", ok),
    ]
    width = max(len(name) for name, _ in rows)
    header = f"restore drill: {m.postgres}, {m.pgbackrest}, Redis {m.redis}"
    return "\n".join([header, *(f"  {name:<{width}}  {value}" for name, value in rows)])


def mib(size: float) -> str:
    """`size` bytes in MiB, to one decimal."""
    return f"{size / 2**20:.1f} MiB"
