"""Stripe through its Python SDK: a PaymentIntent per attempt, confirmed on the server with the
card the shopper's browser tokenized (Stripe.js), the signed webhook, refunds with idempotency
keys, and the balance transactions for reconciliation.

The API's address comes from settings.STRIPE_API_BASE, so the same code talks to Stripe or to
the localstripe process `make run` starts.
"""

from dataclasses import replace
from datetime import UTC, date, datetime, time, timedelta
from decimal import Decimal
from functools import cache

import stripe
from django.conf import settings
from django.http import HttpRequest, HttpResponse
from django.utils.translation import gettext_lazy

from orders.models import Payment, PaymentFailure, Refund
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

_STATES = {"succeeded": TradeState.PAID, "canceled": TradeState.CLOSED}
# A PaymentIntent in these states can still be paid (or is being paid): it is not closed.
_CANCELLABLE = {"requires_payment_method", "requires_confirmation", "requires_action", "requires_capture"}
# The bank's common answers, in the shopper's language; any other in Stripe's own words.
_DECLINES = {
    "card_declined": gettext_lazy("the bank declined the card"),
    "expired_card": gettext_lazy("the card has expired"),
    "incorrect_cvc": gettext_lazy("the security code is wrong"),
    "insufficient_funds": gettext_lazy("the card has too little money on it"),
    "processing_error": gettext_lazy("the bank could not process the card; try again"),
}


@cache
def _client(secret_key: str, api_base: str, timeout: float) -> stripe.StripeClient:
    return stripe.StripeClient(
        secret_key,
        base_addresses={"api": api_base},
        http_client=stripe.new_default_http_client(timeout=timeout),
        max_network_retries=0,  # the shop's sweeps retry, with the idempotency keys below
    )


def client() -> stripe.StripeClient:
    return _client(settings.STRIPE_SECRET_KEY, settings.STRIPE_API_BASE, settings.PAYMENT_GATEWAY_TIMEOUT)


def minor(amount: Decimal) -> int:
    """Stripe counts in the currency's smallest unit (fen for yuan)."""
    return int((amount * 100).to_integral_value())


class NoSuchObject(ProviderRefused):
    """Stripe has no such object (404): an intent it forgot, or never made under this key."""


def _call(method, *args, **kwargs):
    try:
        return method(*args, **kwargs)
    except stripe.CardError as error:
        words = _DECLINES.get(error.code or "")
        raise CardDeclined(str(words) if words else error.user_message or str(error)) from error
    except (stripe.APIConnectionError, stripe.RateLimitError, stripe.APIError) as error:
        raise GatewayDown(f"stripe: {type(error).__name__}: {error}") from error
    except (stripe.AuthenticationError, stripe.PermissionError) as error:
        # The shop's own key was refused (rotated, revoked, too narrow): nothing happened at
        # Stripe, and no shopper's input can mend it. Tried again later, and alerted on.
        raise GatewayDown(f"stripe refused the shop's key: {type(error).__name__}") from error
    except stripe.StripeError as error:
        if error.http_status is None or error.http_status >= 500:
            raise GatewayDown(f"stripe: {error}") from error
        if error.http_status == 404:
            raise NoSuchObject(str(error)) from error
        raise ProviderRefused(str(error)) from error


def _paid_at(intent) -> datetime | None:
    """When Stripe took the money: its charge's creation time, when the answer carries the charge."""
    created = getattr(getattr(intent, "latest_charge", None), "created", None)
    return datetime.fromtimestamp(created, UTC) if isinstance(created, int) else None


# Stripe's code for a 3-D Secure check the shopper did not pass; any other error of the last
# try is the bank's no.
_AUTHENTICATION_FAILED = "payment_intent_authentication_failure"


def _failure(intent: dict) -> str:
    """Why the intent's last try failed (a PaymentFailure value), "" when none did: Stripe
    sends an intent back to requires_payment_method with last_payment_error after a decline
    or a failed 3-D Secure check. `intent` as plain values (to_dict)."""
    error = intent.get("last_payment_error")
    if intent.get("status") != "requires_payment_method" or not error:
        return ""
    return PaymentFailure.AUTHENTICATION if error.get("code") == _AUTHENTICATION_FAILED else PaymentFailure.DECLINED


def _trade(intent) -> Trade:
    state = _STATES.get(intent.status, TradeState.OPEN)
    return Trade(
        state=state,
        provider_ref=intent.id,
        amount=Decimal(intent.amount) / 100,
        currency=intent.currency.upper(),
        paid_at=_paid_at(intent) if state == TradeState.PAID else None,
        failure=_failure(intent.to_dict()) if state == TradeState.OPEN else "",
    )


def _forgotten(ref: str) -> Trade:
    # An intent Stripe does not have can never be paid: its client secret names it.
    return Trade(TradeState.CLOSED, provider_ref=ref)


class StripeProvider(Provider):
    label = gettext_lazy("card (Stripe)")
    choice_label = gettext_lazy("Bank card")
    takes_cards = True
    # The address registered with Stripe (tools/run.py registers it with localstripe).
    notify_endpoint = "webhook"

    def configured(self) -> bool:
        return bool(settings.STRIPE_SECRET_KEY and settings.STRIPE_PUBLISHABLE_KEY)

    def browser_key(self) -> str:
        return settings.STRIPE_PUBLISHABLE_KEY

    def card_script_url(self) -> str:
        return settings.STRIPE_JS_URL

    def _intent(self, payment: Payment):
        # The idempotency key makes a repeat (after a timeout, or from the close) find the same
        # PaymentIntent rather than make a second one.
        return _call(
            client().v1.payment_intents.create,
            params={
                "amount": minor(payment.amount),
                "currency": payment.currency.lower(),
                "payment_method_types": ["card"],
                "metadata": {"trade_no": payment.trade_no, "order_no": payment.order.order_no},
            },
            options={"idempotency_key": f"intent-{payment.trade_no}"},
        )

    def checkout(self, payment: Payment, *, return_url: str, notify_url: str, mobile: bool) -> Checkout:
        intent = self._intent(payment)
        return Checkout(provider_ref=intent.id, client_secret=intent.client_secret)

    def card_confirm(self, payment: Payment, *, token: str) -> tuple[Trade, str]:
        card = _call(client().v1.tokens.retrieve, token).card
        intents = client().v1.payment_intents
        try:
            _call(intents.update, payment.provider_ref, params={"payment_method": card.id})
            intent = _call(intents.confirm, payment.provider_ref)
        except NoSuchObject:
            return _forgotten(payment.provider_ref), ""
        trade = replace(_trade(intent), card_last4=str(getattr(card, "last4", "") or ""))
        return trade, intent.client_secret if intent.status == "requires_action" else ""

    def notice(self, request: HttpRequest) -> Notice:
        try:
            event = stripe.Webhook.construct_event(
                request.body, request.headers.get("Stripe-Signature", ""), settings.STRIPE_WEBHOOK_SECRET
            )
        except stripe.SignatureVerificationError as error:
            raise NoticeRefused("signature") from error
        except ValueError as error:  # not JSON
            raise NoticeRefused("malformed") from error
        try:
            event = event.to_dict()  # plain values: Stripe's objects refuse dict methods
            kind, thing = event["type"], event["data"]["object"]
            if kind.startswith("charge."):
                return Notice(
                    event_id=event["id"],
                    kind=kind,
                    provider_ref=thing["payment_intent"],
                    refunded=kind == "charge.refunded",
                    payload=event,
                )
            return Notice(
                event_id=event["id"],
                kind=kind,
                trade_no=(thing.get("metadata") or {}).get("trade_no", ""),
                provider_ref=thing["id"],
                paid=kind == "payment_intent.succeeded" and thing["status"] == "succeeded",
                failure=_failure(thing) if kind == "payment_intent.payment_failed" else "",
                amount=Decimal(thing["amount"]) / 100,
                currency=str(thing["currency"]).upper(),
                paid_at=datetime.fromtimestamp(int(event["created"]), UTC),
                payload=event,
            )
        except (KeyError, TypeError, ValueError, AttributeError, ArithmeticError) as error:
            raise NoticeRefused("malformed") from error

    def acknowledgement(self) -> HttpResponse:
        return HttpResponse(status=200)

    def query(self, payment: Payment) -> Trade:
        if not payment.provider_ref:
            return Trade(TradeState.UNKNOWN)
        try:
            return _trade(_call(client().v1.payment_intents.retrieve, payment.provider_ref))
        except NoSuchObject:
            return _forgotten(payment.provider_ref)

    def close(self, payment: Payment) -> Trade:
        # Without its id (the create's answer was lost) the create is repeated under its
        # idempotency key, which finds the intent if Stripe made it.
        try:
            if payment.provider_ref:
                current = _call(client().v1.payment_intents.retrieve, payment.provider_ref)
            else:
                current = self._intent(payment)
            ref = current.id
            if current.status in _CANCELLABLE:
                try:
                    return _trade(_call(client().v1.payment_intents.cancel, ref))
                except NoSuchObject:
                    raise
                except ProviderRefused:
                    pass  # it moved on meanwhile (paid, or processing): read it again
                current = _call(client().v1.payment_intents.retrieve, ref)
        except NoSuchObject:
            return _forgotten(payment.provider_ref)
        return _trade(current)

    def refund(self, refund: Refund) -> str:
        answer = _call(
            client().v1.refunds.create,
            params={"payment_intent": refund.payment.provider_ref, "metadata": {"request_no": refund.request_no}},
            options={"idempotency_key": f"refund-{refund.request_no}"},
        )
        return answer.id

    def movements(self, day: date) -> list[Movement]:
        start = datetime.combine(day, time(), tzinfo=UTC)
        window = {"gte": int(start.timestamp()), "lt": int((start + timedelta(days=1)).timestamp())}
        movements = []
        listing = client().v1.balance_transactions.list
        try:
            found = _call(listing, params={"created": window, "limit": 100})
        except ProviderRefused:  # an API without the date filter (localstripe): all, filtered here
            found = _call(listing, params={"limit": 100})
        for item in found.auto_paging_iter():
            if not window["gte"] <= item.created < window["lt"]:
                continue
            if item.type == "charge":
                intent = _call(client().v1.charges.retrieve, item.source).payment_intent
                kind = "payment"
            elif item.type == "refund":
                intent = _call(client().v1.refunds.retrieve, item.source).payment_intent
                kind = "refund"
            else:
                continue
            trade_no = _call(client().v1.payment_intents.retrieve, intent).metadata.to_dict().get("trade_no", "")
            movements.append(
                Movement(
                    kind=kind,
                    trade_no=trade_no,
                    provider_ref=item.source if kind == "refund" else intent,
                    amount=abs(Decimal(item.amount)) / 100,
                    at=datetime.fromtimestamp(item.created, UTC),
                )
            )
        return movements
