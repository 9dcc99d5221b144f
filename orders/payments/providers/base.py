"""What the shop needs from a payment provider, whichever it is, and what a provider answers.

A provider speaks its own protocol through its own SDK; the services (orders.payments.services)
see only these calls and values, and decide every state change themselves.
"""

import enum
from dataclasses import dataclass, field
from datetime import date, datetime
from decimal import Decimal
from typing import Protocol

from django.http import HttpRequest, HttpResponse

from orders.models import Payment, Refund


class GatewayDown(Exception):
    """The provider could not be reached, or answered with an error of its own: nothing is
    known about the call's effect, so the caller keeps its state and tries again later."""


class ProviderRefused(Exception):
    """The provider answered and refused the call (a declined card, a trade in the wrong
    state); the message says why, in the provider's words. A sweep sets the attempt aside and
    asks again later, as for GatewayDown."""


class NoticeRefused(Exception):
    """A notification that is not the provider's, or not about a trade of ours as we made it."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason  # a short label for the log and the metric


class TradeState(enum.Enum):
    OPEN = "open"  # may still be paid
    PAID = "paid"
    CLOSED = "closed"  # can no longer be paid
    # The provider has no such trade yet (an Alipay cashier the shopper never opened); it can
    # still be made until the attempt's own expiry time.
    UNKNOWN = "unknown"


@dataclass(frozen=True)
class Trade:
    """The provider's answer about one attempt, over its authenticated API."""

    state: TradeState
    provider_ref: str = ""
    amount: Decimal | None = None
    currency: str = ""
    paid_at: datetime | None = None  # when the provider took the money, by its own clock


@dataclass(frozen=True)
class Checkout:
    """What the shopper's browser needs to pay one attempt."""

    provider_ref: str = ""
    redirect_url: str = ""  # a cashier page to send the shopper to
    client_secret: str = ""  # a card form's handle on the attempt


@dataclass(frozen=True)
class Notice:
    """A verified notification: the provider signed it, for our app."""

    event_id: str
    kind: str
    trade_no: str = ""  # ours, when the notification carries it
    provider_ref: str = ""
    paid: bool = False  # says the trade was paid
    refunded: bool = False  # says money of the trade went back
    amount: Decimal | None = None
    currency: str = ""
    paid_at: datetime | None = None  # when the provider took the money, by its own clock
    payload: dict = field(default_factory=dict)


@dataclass(frozen=True)
class Movement:
    """One movement of money in a provider's records, for reconciliation."""

    kind: str  # "payment" or "refund"
    trade_no: str
    provider_ref: str
    amount: Decimal  # positive for both kinds
    at: datetime


class Provider(Protocol):
    name: str

    def checkout(self, payment: Payment, *, return_url: str, notify_url: str, mobile: bool) -> Checkout: ...

    def card_confirm(self, payment: Payment, *, token: str) -> tuple[Trade, str]:
        """Pay with a tokenized card: the trade, and the client secret when the bank wants the
        shopper to authenticate (3-D Secure) before it is paid."""
        ...

    def notice(self, request: HttpRequest) -> Notice: ...

    def acknowledgement(self) -> HttpResponse: ...

    def query(self, payment: Payment) -> Trade:
        """The attempt's state; CLOSED when the provider has no such trade and none can be
        made any more (UNKNOWN when one still can)."""
        ...

    def close(self, payment: Payment) -> Trade:
        """Close the attempt so it can no longer be paid; its state after that, as query's."""
        ...

    def refund(self, refund: Refund) -> str: ...

    def movements(self, day: date) -> list[Movement]: ...
