import getpass
from dataclasses import asdict

from django.core.management.base import BaseCommand, CommandError

from sales.models import Sale
from waitingroom.figures import room_figures
from waitingroom.models import WaitingRoom
from waitingroom.room import room_forget, room_read
from waitingroom.services import room_switch, shop_switch, shop_switches

ON_OFF = {"on": True, "off": False}


def operator() -> str:
    """Who threw a switch from the command line, for the log: the OS user running it."""
    try:
        user = getpass.getuser()
    except (KeyError, OSError):
        user = "unknown"
    return f"operator:{user}"[:64]


class Command(BaseCommand):
    help = (
        "Throw a waiting room's switches (queue everyone, stop admitting) for one sale or the whole shop, "
        "and show a room and its figures. Every switch thrown is logged; the web nodes follow within a second."
    )

    def add_arguments(self, parser) -> None:
        where = parser.add_mutually_exclusive_group(required=True)
        where.add_argument("--sale", type=int, help="this sale event's room")
        where.add_argument("--shop", action="store_true", help="the shop-wide switches: every sale's room")
        parser.add_argument("--queue-all", choices=ON_OFF, help="queue everyone, passes included (on), or not (off)")
        parser.add_argument("--stop", choices=ON_OFF, help="admit no one new (on), or admit again (off)")
        parser.add_argument("--show", action="store_true", help="print the room (and its figures) after any switch")

    def handle(self, *args, sale=None, shop=False, queue_all=None, stop=None, show=False, **options) -> None:
        switches = {name: ON_OFF[value] for name, value in (("queue_all", queue_all), ("stop", stop)) if value}
        if not switches:
            show = True
        actor = operator()
        if shop:
            for name, on in switches.items():
                changed = shop_switch(switch=name, on=on, actor_name=actor)
                self._said(f"shop-wide {name}", on, changed)
            if show:
                row = shop_switches()
                self.stdout.write(f"shop-wide: queue_all={int(row.queue_all)} stop={int(row.stop_admitting)}")
            return
        found = Sale.objects.filter(pk=sale).first()
        if found is None:
            raise CommandError(f"no sale event with id {sale}")
        room = WaitingRoom.objects.filter(sale=found).first()
        if room is None:
            raise CommandError(
                f"sale {sale} has no waiting room: set one up in the admin (Sale openings → Waiting rooms) first"
            )
        for name, on in switches.items():
            changed = room_switch(sale=found, switch=name, on=on, actor_name=actor)
            self._said(f"sale {sale} {name}", on, changed)
        if show:
            room.refresh_from_db()
            room_forget()
            published = room_read(found.pk)
            self.stdout.write(
                f"sale {sale}: {'on' if room.enabled else 'off'}, pre-queue opens "
                f"{room.prequeue_opens_at.isoformat() if room.prequeue_opens_at else 'at the start'}, "
                f"admit/min {room.admit_per_minute or '-'}, in at once {room.active_shoppers or '-'}, "
                f"pass {room.pass_minutes} min, brake {'on' if room.brake else 'off'}, "
                f"queue_all={int(room.queue_all)} stop={int(room.stop_admitting)}"
            )
            self.stdout.write(f"published: {published}")
            figures = asdict(room_figures(found.pk))
            self.stdout.write("figures: " + ", ".join(f"{name}={value}" for name, value in figures.items()))

    def _said(self, what: str, on: bool, changed: bool) -> None:
        state = "on" if on else "off"
        if changed:
            self.stdout.write(self.style.SUCCESS(f"{what} {state} (logged)"))
        else:
            self.stdout.write(f"{what} was {state} already: nothing changed")
