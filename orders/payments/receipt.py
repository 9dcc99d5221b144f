"""The shopper's receipt once an order is paid (the paying page turned confirmation): how much
went, how it was paid, and what happens next, as far as the shop knows it."""

from dataclasses import dataclass
from datetime import datetime
from decimal import Decimal

from django.utils.translation import gettext as _

from orders.models import PAID_STATUSES, Order, PaymentStatus
from orders.payments.providers import NoSuchProvider, provider
from users import notices
from users.models import NoticeKind


@dataclass(frozen=True)
class Receipt:
    amount: Decimal
    paid_with: str  # the shopper's words for the way paid, with the card's last four digits
    paid_at: datetime | None
    # Will the shopper be texted when the order ships? (their notification settings)
    texted_when_shipped: bool


def order_receipt(order: Order) -> Receipt | None:
    """The receipt of a paid order (paid, shipped or delivered, with its kept payment); None
    for any other. An order paid before payments were recorded says only its amount."""
    if order.status not in PAID_STATUSES:
        return None
    payment = order.payments.filter(status=PaymentStatus.SUCCEEDED).first()
    paid_with = ""
    if payment is not None:
        try:
            paid_with = str(provider(payment.provider).shopper_label())
        except NoSuchProvider:  # a provider since taken out of the settings
            paid_with = payment.provider
        if payment.card_last4:
            paid_with = _("%(way)s •••• %(last4)s") % {"way": paid_with, "last4": payment.card_last4}
    return Receipt(
        amount=payment.amount if payment is not None else order.price * order.quantity,
        paid_with=paid_with,
        paid_at=order.paid_at,
        texted_when_shipped=notices.notice_wanted(user=order.user, kind=NoticeKind.ORDER_SHIPPED),
    )
