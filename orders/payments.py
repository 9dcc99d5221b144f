"""Payment providers. The shop ships a simulated one; a real provider implements the same
two calls and is named in settings.PAYMENT_PROVIDER."""

from dataclasses import dataclass
from functools import cache
from typing import Protocol

from django.conf import settings
from django.utils.module_loading import import_string

from orders.models import Order


@dataclass(frozen=True)
class Charge:
    ok: bool
    reference: str = ""
    error: str = ""


class PaymentProvider(Protocol):
    def charge(self, order: Order) -> Charge: ...

    def refund(self, order: Order, charge: Charge) -> None: ...


class SimulatedProvider:
    """Always succeeds: the demo's "pay" button."""

    def charge(self, order: Order) -> Charge:
        return Charge(ok=True, reference=f"SIM-{order.order_no}")

    def refund(self, order: Order, charge: Charge) -> None:
        return None


@cache
def provider() -> PaymentProvider:
    return import_string(settings.PAYMENT_PROVIDER)()
