from django.core.management.base import BaseCommand, CommandError

from sales.models import Sale
from seckill.repairs import reconcile_repair_record
from seckill.selectors import sales_to_reconcile
from seckill.services.reconcile import RESERVATION_STALE_SECONDS, sale_reconcile


class Command(BaseCommand):
    help = (
        "Compare database stock, Redis stock, buyer sets and reservations of active and recently ended "
        "sales; with --repair, finish stale reservations and reload drifted Redis state."
    )

    def add_arguments(self, parser) -> None:
        parser.add_argument("--sale", type=int, help="only this sale event id")
        parser.add_argument("--repair", action="store_true", help="change what is wrong (default: only report)")
        parser.add_argument(
            "--stale-after",
            type=float,
            default=RESERVATION_STALE_SECONDS,
            help="seconds after which a reservation counts as stale (default %(default)s)",
        )

    def handle(self, *args, sale: int | None, repair: bool, stale_after: float, **options) -> None:
        if sale is not None and not Sale.objects.filter(pk=sale).exists():
            raise CommandError(f"no sale event with id {sale}")
        problems = 0
        for sale_id in [sale] if sale is not None else sales_to_reconcile():
            report = sale_reconcile(sale_id=sale_id, repair=repair, stale_after=stale_after)
            if report.skipped:
                self.stdout.write(f"sale {sale_id}: skipped, another reconciler is working on it")
                continue
            if repair:
                reconcile_repair_record(report=report)
            before = report.before
            assert before is not None  # a sale not skipped was read before any repair
            line = (
                f"sale {sale_id}: redis stock {before.previous_stock}, expected {before.stock}; "
                f"buyers {before.previous_buyers}, expected {before.buyers}"
                f"{' (sets differ)' if before.buyers_differ else ''}; "
                f"stale reservations {len(report.stale_reservations)}"
            )
            self.stdout.write(line)
            for request_id, outcome in report.finished.items():
                self.stdout.write(f"  finished reservation {request_id}: {outcome}")
            if report.after is not None:
                self.stdout.write(f"  repaired: redis stock now {report.after.stock}, buyers {report.after.buyers}")
            problems += not report.clean
        verdict = "repaired" if repair else "found"
        self.stdout.write(
            self.style.SUCCESS(f"{verdict} problems on {problems} sale(s)")
            if not problems or repair
            else self.style.WARNING(f"found problems on {problems} sale(s); run with --repair")
        )
