"""Compare one day's payments and refunds with the providers' records (orders.payments.reconcile)."""

from datetime import date, timedelta

from django.core.management.base import BaseCommand, CommandError
from django.utils import timezone

from orders.payments.reconcile import payments_reconcile


class Command(BaseCommand):
    help = "Reconcile a day's payments and refunds with each enabled provider's records of the day."

    def add_arguments(self, parser):
        parser.add_argument("--date", help="YYYY-MM-DD in the shop's time zone (default: yesterday)")

    def handle(self, *args, **options):
        try:
            day = date.fromisoformat(options["date"]) if options["date"] else timezone.localdate() - timedelta(days=1)
        except ValueError as error:
            raise CommandError(f"--date: {error}") from error
        found = payments_reconcile(day=day)
        if not found:
            self.stdout.write(f"{day}: the shop and the providers agree; the money invariants hold")
            return
        for kind, count in sorted(found.items()):
            self.stdout.write(f"{day}: {count} × {kind}")
        raise CommandError(f"{sum(found.values())} mismatches on {day}; see the admin's payment mismatches")
