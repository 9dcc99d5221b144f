"""A provider that lives in this process, for tests: no network, no SDK, and every answer is
the test's to decide. Registered only where a test asks for it (override_settings, or the
`dummy` fixture of orders/tests/conftest.py), never in the shop's settings.

The test plays the provider's side through `gateway`, this module's one DummyGateway: the
buyer pays (at the amount the attempt asked, or another), a card is declined or waits for 3-D
Secure, a notification is sent once, twice or never, the provider is down. The shop's side
calls the Provider methods as it calls a real provider's, and the gateway keeps what they did
(trades opened, closed, paid, refunded) for the test to read.

A notification is the payload signed with the shop's SECRET_KEY (django.core.signing), so
the webhook checks it as a real one: a forged or altered body is refused.

Card tokens: "tok_pay" pays at once, "tok_decline" is declined by the bank, "tok_pending"
asks the shopper to authenticate first (the trade stays open), anything else is declined.
"""

import itertools
import threading
from dataclasses import dataclass, field
from datetime import date, datetime
from decimal import Decimal

from django.core import signing
from django.http import HttpRequest, HttpResponse
from django.utils import timezone

from orders.models import Payment, Refund
from orders.payments.providers.base import (
    CardDeclined,
    Checkout,
    GatewayDown,
    Movement,
    Notice,
    NoticeRefused,
    Provider,
    ProviderRefused,
    Trade,
    TradeState,
)

SALT = "orders.payments.providers.dummy"
TOKEN_PAYS, TOKEN_DECLINED, TOKEN_PENDING = "tok_pay", "tok_decline", "tok_pending"


@dataclass
class DummyTrade:
    """One trade as the dummy provider keeps it."""

    trade_no: str
    provider_ref: str
    amount: Decimal
    currency: str
    state: TradeState = TradeState.OPEN
    paid_amount: Decimal | None = None  # what the buyer paid, which a test may make differ
    paid_at: datetime | None = None
    refunds: dict[str, tuple[str, datetime]] = field(default_factory=dict)  # request_no -> ref, when


class DummyGateway:
    """The provider's side of the dummy: its records, and the moves a test makes there."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.reset()

    def reset(self) -> None:
        """Forget every trade and notification; up again."""
        with self._lock:
            self.trades: dict[str, DummyTrade] = {}
            self.down = False  # every call raises GatewayDown, as an unreachable provider's
            self._numbers = itertools.count(1)

    def check_up(self) -> None:
        if self.down:
            raise GatewayDown("dummy: down, as the test asked")

    def trade(self, trade_no: str) -> DummyTrade:
        try:
            return self.trades[trade_no]
        except KeyError:
            raise AssertionError(f"the dummy provider has no trade {trade_no}") from None

    def open(self, payment: Payment) -> DummyTrade:
        """The trade of `payment`, made on its first checkout (a repeat finds the same one)."""
        with self._lock:
            found = self.trades.get(payment.trade_no)
            if found is None:
                found = self.trades[payment.trade_no] = DummyTrade(
                    trade_no=payment.trade_no,
                    provider_ref=f"D{next(self._numbers):06d}",
                    amount=payment.amount,
                    currency=payment.currency,
                )
            return found

    def pay(self, trade_no: str, *, amount: Decimal | None = None) -> DummyTrade:
        """The buyer pays an open trade, `amount` (the trade's own when None). A closed trade
        cannot be paid (ProviderRefused), as at a real provider; a paid one stays as it was."""
        trade = self.trade(trade_no)
        with self._lock:
            if trade.state == TradeState.CLOSED:
                raise ProviderRefused("dummy: the trade is closed")
            if trade.state != TradeState.PAID:
                trade.state = TradeState.PAID
                trade.paid_amount = trade.amount if amount is None else amount
                trade.paid_at = timezone.now()
        return trade

    def notification(self, trade_no: str, *, kind: str = "", **fields) -> bytes:
        """A signed notification about `trade_no`, as the provider would POST it; each call a
        new event. By default it tells the trade's state (paid, at the amount paid); `fields`
        (amount, currency, paid, refunded, event_id, provider_ref) override what it says."""
        trade = self.trade(trade_no)
        paid = trade.state == TradeState.PAID
        payload = {
            "event_id": f"E{next(self._numbers):06d}",
            "kind": kind or ("paid" if paid else "open"),
            "trade_no": trade.trade_no,
            "provider_ref": trade.provider_ref,
            "paid": paid and not trade.refunds,
            "refunded": bool(trade.refunds),
            "amount": str(trade.paid_amount if paid else trade.amount),
            "currency": trade.currency,
            "paid_at": trade.paid_at.isoformat() if trade.paid_at else None,
        }
        payload.update({key: str(value) if isinstance(value, Decimal) else value for key, value in fields.items()})
        return signing.dumps(payload, salt=SALT).encode()

    def refunds(self, trade_no: str) -> int:
        """How many refunds the provider made of `trade_no`."""
        return len(self.trade(trade_no).refunds)


gateway = DummyGateway()


def _as_trade(trade: DummyTrade) -> Trade:
    paid = trade.state == TradeState.PAID
    return Trade(
        state=trade.state,
        provider_ref=trade.provider_ref,
        amount=trade.paid_amount if paid else trade.amount,
        currency=trade.currency,
        paid_at=trade.paid_at,
    )


class DummyProvider(Provider):
    label = "dummy provider"  # tests only: never shown to a shopper, so not translated
    takes_cards = True

    def browser_key(self) -> str:
        return "pk_dummy"

    def checkout(self, payment: Payment, *, return_url: str, notify_url: str, mobile: bool) -> Checkout:
        gateway.check_up()
        trade = gateway.open(payment)
        return Checkout(provider_ref=trade.provider_ref, client_secret=f"{trade.provider_ref}_secret")

    def card_confirm(self, payment: Payment, *, token: str) -> tuple[Trade, str]:
        gateway.check_up()
        trade = gateway.trade(payment.trade_no)
        if trade.state != TradeState.OPEN:
            return _as_trade(trade), ""
        if token == TOKEN_PAYS:
            return _as_trade(gateway.pay(payment.trade_no)), ""
        if token == TOKEN_PENDING:
            return _as_trade(trade), f"{trade.provider_ref}_secret"
        raise CardDeclined("the bank declined the card")

    def notice(self, request: HttpRequest) -> Notice:
        try:
            payload = signing.loads(request.body.decode(), salt=SALT)
        except (signing.BadSignature, UnicodeDecodeError) as error:
            raise NoticeRefused("signature") from error
        try:
            return Notice(
                event_id=payload["event_id"],
                kind=payload["kind"],
                trade_no=payload["trade_no"],
                provider_ref=payload["provider_ref"],
                paid=bool(payload["paid"]),
                refunded=bool(payload["refunded"]),
                amount=Decimal(payload["amount"]),
                currency=payload["currency"],
                paid_at=datetime.fromisoformat(payload["paid_at"]) if payload["paid_at"] else None,
                payload=payload,
            )
        except (KeyError, TypeError, ValueError, ArithmeticError) as error:
            raise NoticeRefused("malformed") from error

    def acknowledgement(self) -> HttpResponse:
        return HttpResponse("ok", content_type="text/plain")

    def query(self, payment: Payment) -> Trade:
        gateway.check_up()
        found = gateway.trades.get(payment.trade_no)
        return _as_trade(found) if found is not None else Trade(TradeState.UNKNOWN)

    def close(self, payment: Payment) -> Trade:
        gateway.check_up()
        found = gateway.trades.get(payment.trade_no)
        if found is None:
            return Trade(TradeState.UNKNOWN)
        if found.state == TradeState.OPEN:
            found.state = TradeState.CLOSED
        return _as_trade(found)

    def refund(self, refund: Refund) -> str:
        """Idempotent on the request number; a trade not paid, or refunded under another
        request number, is refused."""
        gateway.check_up()
        trade = gateway.trade(refund.payment.trade_no)
        if refund.request_no in trade.refunds:
            return trade.refunds[refund.request_no][0]
        if trade.state != TradeState.PAID:
            raise ProviderRefused("dummy: the trade was not paid")
        if trade.refunds:
            raise ProviderRefused("dummy: the trade was refunded already")
        if refund.amount != trade.paid_amount:
            raise ProviderRefused("dummy: a refund is of the whole amount paid")
        reference = f"{trade.provider_ref}R"
        trade.refunds[refund.request_no] = (reference, timezone.now())
        return reference

    def movements(self, day: date) -> list[Movement]:
        gateway.check_up()
        movements = []
        for trade in list(gateway.trades.values()):
            if trade.paid_at is not None and trade.paid_amount is not None and timezone.localdate(trade.paid_at) == day:
                movements.append(
                    Movement("payment", trade.trade_no, trade.provider_ref, trade.paid_amount, trade.paid_at)
                )
            for reference, when in trade.refunds.values():
                if trade.paid_amount is not None and timezone.localdate(when) == day:
                    movements.append(Movement("refund", trade.trade_no, reference, trade.paid_amount, when))
        return movements
