from django.core.management.base import BaseCommand

from waitingroom.services import rooms_publish_all


class Command(BaseCommand):
    help = (
        "Write every sale's waiting room and the shop-wide switches from the database to Redis "
        "(after Redis lost them). Safe at any time: it writes what the database holds."
    )

    def handle(self, *args, **options) -> None:
        on = rooms_publish_all()
        self.stdout.write(self.style.SUCCESS(f"published the shop-wide switches and {on} waiting room(s) on"))
