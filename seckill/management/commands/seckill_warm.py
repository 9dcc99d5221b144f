from django.core.management.base import BaseCommand, CommandError

from sales.services import goods_list_cache_drop
from seckill.selectors import captcha_pool_size
from seckill.services.paths import captcha_pool_fill
from seckill.services.reconcile import stock_warm, stock_warm_all
from seckill_site.redis import scripts_load
from waitingroom.services import room_publish, rooms_publish_all


class Command(BaseCommand):
    help = (
        "Load sale stock, buyer sets, sale windows and waiting rooms from the database into Redis. Safe at any time: "
        "units reserved in Redis but not yet written to the database stay reserved."
    )

    def add_arguments(self, parser) -> None:
        parser.add_argument("--sale", type=int, help="only this sale event id")
        parser.add_argument(
            "--captchas",
            type=int,
            help="fill the captcha pool to this many (default SECKILL_CAPTCHA_POOL; 0 leaves it to beat)",
        )

    def handle(self, *args, sale: int | None = None, captchas: int | None = None, **options) -> None:
        if sale is not None:
            report = stock_warm(sale_id=sale)
            if report is None:
                raise CommandError(f"no sale event with id {sale}")
            reports = [report]
        else:
            reports = stock_warm_all()
        goods_list_cache_drop()
        # The waiting rooms too: a Redis that lost the sales lost their rooms and switches with them.
        if sale is not None:
            self.stdout.write(f"waiting room: {'on' if room_publish(sale_id=sale).on else 'none or off'}")
        else:
            self.stdout.write(f"waiting rooms on: {rooms_publish_all()}")
        # On every primary of a cluster, so the opening second's first buyers pay no SCRIPT LOAD.
        self.stdout.write(f"Lua scripts loaded: {', '.join(scripts_load())}")
        for report in reports:
            before = "missing" if report.previous_stock is None else report.previous_stock
            change = "unchanged" if report.previous_stock == report.stock else f"{before} -> {report.stock}"
            buyers = f"{report.previous_buyers} -> {report.buyers}" if report.buyers_differ else "unchanged"
            self.stdout.write(f"sale {report.sale_id}: stock {change}, buyers {buyers} ({report.buyers})")
        # The opening's shoppers take these instead of drawing their own.
        drawn = captcha_pool_fill(size=captchas)
        self.stdout.write(f"captcha pool: {drawn} drawn, {captcha_pool_size()} ready")
        self.stdout.write(self.style.SUCCESS(f"warmed {len(reports)} sale(s)"))
