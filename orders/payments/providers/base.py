"""What the shop needs from a payment provider, whichever it is, and what a provider answers.

A provider speaks its own protocol through its own SDK; the services (orders.payments.services)
see only these calls and values, and decide every state change themselves. Everything the rest
of the shop knows about one provider (its name, labels, whether it takes cards, its browser
script) is an attribute or a method of its Provider subclass, found through the registry
(orders.payments.providers.registry).
"""

import abc
import enum
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import date, datetime
from decimal import Decimal

from django.http import HttpRequest, HttpResponse
from django.utils.functional import Promise

from orders.models import Payment, Refund


class GatewayDown(Exception):
    """The provider could not be reached, or answered with an error of its own: nothing is
    known about the call's effect, so the caller keeps its state and tries again later."""


class ProviderRefused(Exception):
    """The provider answered and refused the call (a declined card, a trade in the wrong
    state); the message says why, in the provider's words. A sweep sets the attempt aside and
    asks again later, as for GatewayDown."""


class CardDeclined(ProviderRefused):
    """The bank declined the card: the attempt failed (PaymentFailure.DECLINED). The message
    says why, in the shopper's words where the provider's code is a common one."""


class NoticeRefused(Exception):
    """A notification that is not the provider's, or not about a trade of ours as we made it."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason  # a short label for the log and the metric


class TradeState(enum.Enum):
    OPEN = "open"  # may still be paid
    PAID = "paid"
    CLOSED = "closed"  # can no longer be paid
    # The provider has no such trade yet (a cashier the shopper never opened); it can
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
    # An OPEN trade whose last try failed: a PaymentFailure value, "" when none did.
    failure: str = ""
    # The last four digits of the card it was paid with, when a card and the provider says.
    card_last4: str = ""


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
    failure: str = ""  # says a try failed: a PaymentFailure value
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


class Provider(abc.ABC):
    """One payment provider. A subclass is registered under a name in settings.PAYMENT_PROVIDERS
    (the registry makes one instance per name, `Provider(name)`); that name is what payments,
    notifications and metrics record, and its notification address is
    /payments/<name>/<notify_endpoint>.

    A subclass sets `label` (and `choice_label` when the shopper's words differ), `takes_cards`,
    `notify_endpoint` when the provider's dashboard holds another address, and implements the
    abstract calls. `configured` says whether its credentials are set: an unconfigured provider
    is off (the cashier offers it not, its notifications get a 404, no sweep asks it)."""

    # What staff see (the admin); the shopper picks choice_label on the order page.
    label: str | Promise = ""
    choice_label: str | Promise = ""
    # Paid with a card the shopper's browser tokenizes: checkout answers a client secret, the
    # card form (orders/card.html) loads card_script_url and the browser_key, then card_confirm.
    takes_cards = False
    notify_endpoint = "notify"
    # A shopper who pays at this provider's cashier is sent back to the shop with its signed
    # word (return_verified); one who comes back without it left the cashier unpaid.
    signs_return = False

    def __init__(self, name: str) -> None:
        self.name = name

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.name!r}>"

    def configured(self) -> bool:
        """Whether the credentials this provider needs are set (the provider is on)."""
        return True

    def shopper_label(self) -> str | Promise:
        return self.choice_label or self.label

    def browser_key(self) -> str:
        """The public key the shopper's browser hands the provider's script; "" for none."""
        return ""

    def card_script_url(self) -> str:
        """The provider's own script that tokenizes a card in the shopper's browser."""
        return ""

    def return_verified(self, params: Mapping[str, str], payment: Payment) -> bool:
        """Whether `params`, the query the shopper came back from the cashier with, carry the
        provider's signed word about `payment` (only where signs_return)."""
        return False

    @abc.abstractmethod
    def checkout(self, payment: Payment, *, return_url: str, notify_url: str, mobile: bool) -> Checkout:
        """Open `payment` at the provider: where the shopper's browser pays it. GatewayDown or
        ProviderRefused when it could not be opened."""

    def card_confirm(self, payment: Payment, *, token: str) -> tuple[Trade, str]:
        """Pay with a tokenized card: the trade, and the client secret when the bank wants the
        shopper to authenticate (3-D Secure) before it is paid. CardDeclined when the bank said no."""
        raise ProviderRefused(f"{self.label} takes no cards")

    @abc.abstractmethod
    def notice(self, request: HttpRequest) -> Notice:
        """The verified notification `request` carries; NoticeRefused when it is not one."""

    @abc.abstractmethod
    def acknowledgement(self) -> HttpResponse:
        """The answer that stops the provider resending a notification."""

    @abc.abstractmethod
    def query(self, payment: Payment) -> Trade:
        """The attempt's state; CLOSED when the provider has no such trade and none can be
        made any more (UNKNOWN when one still can)."""

    @abc.abstractmethod
    def close(self, payment: Payment) -> Trade:
        """Close the attempt so it can no longer be paid; its state after that, as query's."""

    @abc.abstractmethod
    def refund(self, refund: Refund) -> str:
        """Refund `refund` in full: the provider's reference for it. Idempotent on
        refund.request_no, so a resend never refunds twice."""

    @abc.abstractmethod
    def movements(self, day: date) -> list[Movement]:
        """The payments and refunds the provider's records show on `day` (its own calendar)."""
