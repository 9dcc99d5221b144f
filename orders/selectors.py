"""Reads on orders, always scoped to whoever asks."""

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import datetime, timedelta
from decimal import Decimal
from typing import Any

from django.conf import settings
from django.db.models import Count, DecimalField, Exists, ExpressionWrapper, F, OuterRef, Q, QuerySet, Subquery, Sum
from django.db.models.functions import TruncSecond
from django.utils import timezone
from django.utils.translation import gettext, gettext_lazy, pgettext_lazy
from django.utils.translation import gettext as _

from orders.models import (
    ORDER_ADDRESS_FIELDS,
    PAID_STATUSES,
    RETURN_ACTIVE,
    Order,
    OrderAddress,
    OrderEventKind,
    OrderMessage,
    OrderStatus,
    PaymentFailure,
    PaymentStatus,
    RefundRequest,
    RefundRequestStatus,
    ReturnRequest,
    ReturnRequestStatus,
    Shipment,
)
from sales import sale_state
from sales.models import Sale, SaleDraw
from sales.selectors import sale_status, stock_left
from seckill_site.redis import now as redis_now
from users.addresses.selectors import address_default, address_of_user
from users.models import Address, User


def orders_of_user(*, user: User) -> QuerySet[Order]:
    return Order.objects.filter(user=user).select_related("goods", "sale", "address").order_by("-created_at")


def order_address(order: Order) -> OrderAddress | None:
    """The address a paid order ships to; None before it is paid."""
    try:
        return order.address
    except OrderAddress.DoesNotExist:
        return None


def order_shipment(order: Order) -> Shipment | None:
    """The parcel of a shipped order; None before it ships."""
    try:
        return order.shipment
    except Shipment.DoesNotExist:
        return None


def order_address_data(order: Order) -> dict[str, str] | None:
    address = order_address(order)
    if address is None:
        return None
    return {name: getattr(address, name) for name in ORDER_ADDRESS_FIELDS}


def order_payment_data(order: Order) -> dict[str, Any]:
    """What the shopper's pages poll while a provider decides: the order's status, whether an
    attempt is still open and waits for the provider's word, or failed (the newest one's
    PaymentFailure: nothing was charged, the order still payable), and the refund of a
    payment the order could not take, if any.

    The status is read after the payments: a notification committing between the two reads
    then shows as an attempt still open on an order already paid (paid wins), never as an
    unpaid order with no attempt left."""
    payments = list(order.payments.select_related("refund").order_by("-created_at", "-pk"))
    status = Order.objects.values_list("status", flat=True).get(pk=order.pk)
    refunds = [payment.refund for payment in payments if hasattr(payment, "refund")]
    # The newest attempt is the shopper's latest try: its failure is the news, whatever an
    # older attempt left open would still allow.
    failure = payments[0].failure if status == OrderStatus.UNPAID and payments and payments[0].failure else None
    open_ = any(payment.status == PaymentStatus.OPEN for payment in payments)
    return {
        "status": status,
        "paying": status == OrderStatus.UNPAID and open_ and failure is None,
        "failure": failure,
        "provider": payments[0].provider if payments else None,
        "refund": (
            {"status": refunds[0].status, "amount": str(refunds[0].amount), "kind": refunds[0].kind}
            if refunds
            else None
        ),
    }


def order_payment_shown(order: Order) -> dict[str, Any]:
    """order_payment_data for a page that shows the order too: `order` is read again when a
    payment landed since it was read, so the page agrees with itself. A paid payment beside
    an order still unpaid would show "paid" without the receipt, and a paying page's script,
    seeing the state it shows, would never reload to it."""
    payment = order_payment_data(order)
    if payment["status"] != order.status:
        order.refresh_from_db()
    return payment


# What the shopper reads under "Payment not completed" for each PaymentFailure.
PAYMENT_FAILURE_WORDS = {
    PaymentFailure.DECLINED: gettext_lazy("The bank declined the card. Try another card, or another way to pay."),
    PaymentFailure.AUTHENTICATION: gettext_lazy(
        "The bank's security check (3-D Secure) was not completed. Try again, or another way to pay."
    ),
    PaymentFailure.LEFT: gettext_lazy(
        "You left the payment page before paying. If you did pay, this page shows it within a minute."
    ),
}


def return_until(shipment: Shipment | None) -> datetime | None:
    """Until when a delivered order may be sent back; None before delivery (a shipped order
    may be sent back any time before it completes)."""
    if shipment is None or shipment.delivered_at is None:
        return None
    return shipment.delivered_at + timedelta(days=settings.RETURN_WINDOW_DAYS)


def auto_complete_at(shipment: Shipment | None) -> datetime | None:
    """When a shipped order completes by itself, unless a return is under way."""
    if shipment is None:
        return None
    return shipment.shipped_at + timedelta(days=settings.ORDER_AUTO_COMPLETE_DAYS)


def order_shipment_data(order: Order) -> dict[str, Any] | None:
    shipment = order_shipment(order)
    if shipment is None:
        return None
    return {
        "carrier": shipment.carrier,
        "carrierName": str(shipment.get_carrier_display()),
        "trackingNo": shipment.tracking_no,
        "shippedAt": shipment.shipped_at.isoformat(),
        "deliveredAt": shipment.delivered_at.isoformat() if shipment.delivered_at else None,
    }


def order_refund_request_data(order: Order) -> dict[str, str] | None:
    """The shopper's latest refund request on the order."""
    request = order.refund_requests.first()
    return {"status": request.status, "reason": request.reason, "answer": request.answer} if request else None


def order_messages(order: Order) -> list[OrderMessage]:
    """The order's thread with the merchant (orders.contact), oldest first."""
    return list(OrderMessage.objects.filter(order=order).order_by("created_at", "pk"))


def order_messages_data(order: Order) -> list[dict[str, Any]]:
    return [
        {"fromMerchant": message.from_merchant, "text": message.text, "at": message.created_at.isoformat()}
        for message in order_messages(order)
    ]


def orders_with_messages_to_answer(orders: QuerySet[Order]) -> QuerySet[Order]:
    """Those of `orders` with a shopper's message the merchant has not answered."""
    waiting = OrderMessage.objects.filter(order_id=OuterRef("pk"), from_merchant=False, answered_at__isnull=True)
    return orders.filter(Exists(waiting))


def order_return_request_data(order: Order) -> dict[str, Any] | None:
    """The shopper's latest return request on the order, with the parcel sent back."""
    request = order.return_requests.first()
    if request is None:
        return None
    return {
        "status": request.status,
        "reason": request.reason,
        "answer": request.answer,
        "returnAddress": request.return_address,
        "carrier": request.carrier,
        "carrierName": str(request.get_carrier_display()) if request.carrier else "",
        "trackingNo": request.tracking_no,
        "sentAt": request.sent_at.isoformat() if request.sent_at else None,
        "refundedAt": request.refunded_at.isoformat() if request.refunded_at else None,
    }


def order_data(order: Order) -> dict[str, Any]:
    """An order as the JSON clients read it (the order page's twin and the API)."""
    payment = order_payment_shown(order)  # first: the order's fields then agree with it
    return {
        "id": order.pk,
        "orderNo": order.order_no,
        "goodsName": order.item_name,
        "price": str(order.price),
        "status": order.status,
        "createdAt": order.created_at.isoformat(),
        "payDeadline": order.pay_deadline.isoformat(),
        "paidAt": order.paid_at.isoformat() if order.paid_at else None,
        "cancelledAt": order.cancelled_at.isoformat() if order.cancelled_at else None,
        "address": order_address_data(order),
        "payment": payment,
        "shipment": order_shipment_data(order),
        "refundRequest": order_refund_request_data(order),
        "messages": order_messages_data(order),
        "returnRequest": order_return_request_data(order),
    }


# The shopper's tabs on "my orders", as every Chinese shop has them (待付款 / 待发货 / 待收货 /
# 已完成 / 退款): the slug in ?tab=, its name, and which orders it holds.
ORDER_TABS = {
    "unpaid": (gettext_lazy("To pay"), Q(status=OrderStatus.UNPAID)),
    "to-ship": (gettext_lazy("To ship"), Q(status=OrderStatus.PAID)),
    "shipped": (gettext_lazy("On the way"), Q(status=OrderStatus.SHIPPED)),
    "completed": (gettext_lazy("Completed"), Q(status=OrderStatus.DELIVERED)),
    "refunds": (
        gettext_lazy("Refunds"),
        Q(status=OrderStatus.REFUNDED)
        | Q(refund_requests__status=RefundRequestStatus.OPEN)
        | Q(return_requests__status__in=RETURN_ACTIVE),
    ),
}

# How the shopper's pages name each status: what happens next, not the bookkeeping.
SHOPPER_STATUS = {
    OrderStatus.UNPAID: gettext_lazy("to pay"),
    OrderStatus.PAID: gettext_lazy("paid, to ship"),
    OrderStatus.SHIPPED: gettext_lazy("on the way"),
    OrderStatus.DELIVERED: gettext_lazy("completed"),
    OrderStatus.CANCELLED: gettext_lazy("closed"),
    OrderStatus.REFUNDED: gettext_lazy("refunded"),
}
# A paid order whose refund request waits for the merchant: not "to ship" (it does not ship
# meanwhile) but this, on the pill of its page and of "my orders".
REFUND_ASKED_STATUS = ("refund-asked", pgettext_lazy("an order's status", "refund requested"))
# A shipped or delivered order with a return under way: where the return is, not the parcel.
RETURN_STATUS = {
    ReturnRequestStatus.OPEN: ("return-asked", pgettext_lazy("an order's status", "return requested")),
    ReturnRequestStatus.APPROVED: ("return-approved", pgettext_lazy("an order's status", "send it back")),
    ReturnRequestStatus.SENT: ("return-sent", pgettext_lazy("an order's status", "on its way back")),
}


def order_pill(order: Order, *, refund_asked: bool, returning: str | None = None) -> tuple[str, str]:
    """The status pill the shopper's pages show for `order`: its css class and its words.
    `returning` is the status of a return under way (RETURN_ACTIVE), if any."""
    if refund_asked and order.status == OrderStatus.PAID:
        return REFUND_ASKED_STATUS[0], str(REFUND_ASKED_STATUS[1])
    if returning in RETURN_STATUS and order.status in (OrderStatus.SHIPPED, OrderStatus.DELIVERED):
        css, words = RETURN_STATUS[ReturnRequestStatus(returning)]
        return css, str(words)
    return order.status, str(SHOPPER_STATUS[OrderStatus(order.status)])


def order_tab_counts(*, user: User) -> dict[str, int]:
    """How many of the shopper's orders each tab holds, in one query."""
    return Order.objects.filter(user=user).aggregate(
        **{
            slug.replace("-", "_"): Count("pk", filter=where, distinct=True)
            for slug, (_name, where) in ORDER_TABS.items()
        }
    )


def order_timeline(order: Order) -> list[dict[str, Any]]:
    """The order's story for its page, oldest first: placed, then each move of its trail
    (orders.models.OrderEvent). An order paid before the trail began shows its payment time."""
    steps = [{"kind": "placed", "label": gettext("Order placed"), "at": order.created_at, "note": ""}]
    events = list(order.events.all())
    if order.paid_at and not any(event.kind == OrderEventKind.PAID for event in events):
        steps.append({"kind": "paid", "label": gettext("Payment received"), "at": order.paid_at, "note": ""})
    labels = {
        OrderEventKind.PAID: gettext("Payment received"),
        OrderEventKind.SHIPPED: gettext("Shipped"),
        OrderEventKind.DELIVERED: gettext("Delivered"),
        OrderEventKind.CANCELLED: gettext("Closed"),
        OrderEventKind.REFUND_REQUESTED: gettext("You asked for a refund"),
        OrderEventKind.REFUND_DECLINED: gettext("The merchant declined the refund"),
        OrderEventKind.REFUND_WITHDRAWN: gettext("You withdrew the refund request"),
        OrderEventKind.REFUNDED: gettext("Refunded"),
        OrderEventKind.COMPLETED: gettext("Completed automatically"),
        OrderEventKind.RETURN_REQUESTED: gettext("You asked to send it back"),
        OrderEventKind.RETURN_APPROVED: gettext("The merchant approved the return"),
        OrderEventKind.RETURN_DECLINED: gettext("The merchant declined the return"),
        OrderEventKind.RETURN_WITHDRAWN: gettext("You withdrew the return"),
        OrderEventKind.RETURN_SENT: gettext("You sent the parcel back"),
        OrderEventKind.RETURN_RECEIVED: gettext("The merchant received the parcel back"),
    }
    returned = order.return_requests.filter(sent_at__isnull=False).first()
    for event in events:
        note = event.note
        if event.kind == OrderEventKind.CANCELLED:
            note = gettext(note) if note else ""  # a cancel reason, stored in English
        elif event.kind == OrderEventKind.PAID:
            note = ""  # the trade number is the merchant's business
        elif event.kind == OrderEventKind.SHIPPED and (shipment := order_shipment(order)):
            note = f"{shipment.get_carrier_display()} {note}"
        elif event.kind == OrderEventKind.RETURN_SENT and returned and returned.carrier:
            note = f"{returned.get_carrier_display()} {note}"
        steps.append({"kind": event.kind, "label": labels[OrderEventKind(event.kind)], "at": event.at, "note": note})
    return steps


def orders_listed(*, user: User, tab: str = "") -> QuerySet[Order]:
    """The shopper's orders for "my orders" (those of one of ORDER_TABS, or all), each with
    what was refunded of it (refunded and being refunded), so a cancelled order whose late
    payment went back says so, whether a refund request of it waits (refund_asked), and the
    status of a return under way (returning: None without one)."""
    refunds = "payments__refund"
    orders = orders_of_user(user=user)
    if tab:
        orders = orders.filter(pk__in=Order.objects.filter(ORDER_TABS[tab][1], user=user).values("pk"))
    asking = RefundRequest.objects.filter(order_id=OuterRef("pk"), status=RefundRequestStatus.OPEN)
    return orders.annotate(
        refunded=Sum(f"{refunds}__amount", filter=Q(**{f"{refunds}__status": "succeeded"})),
        refunding=Sum(f"{refunds}__amount", filter=Q(**{f"{refunds}__status": "pending"})),
        refund_asked=Exists(asking),
        returning=Subquery(
            ReturnRequest.objects.filter(order_id=OuterRef("pk"), status__in=RETURN_ACTIVE).values("status")[:1]
        ),
    )


def orders_listed_with_returns(*, user: User, tab: str = "", limit: int) -> list[tuple[Order, bool, str | None]]:
    """The first `limit` of orders_listed, each with whether a refund request waits and the
    status of a return under way (None without one), for the pills of "my orders"."""
    orders = orders_listed(user=user, tab=tab)[:limit]
    return [(order, order.refund_asked, order.returning) for order in orders]  # type: ignore[attr-defined]


def order_no_well_formed(order_no: str) -> bool:
    """Order numbers are digits, at most 32 of them; anything else (a NUL byte, say) must never
    reach the database, which would refuse it with an error rather than find nothing."""
    return order_no.isascii() and order_no.isdigit() and len(order_no) <= 32


def order_of_user(*, user: User, order_no: str) -> Order | None:
    """Another shopper's order is indistinguishable from a missing one (both None → 404)."""
    if not order_no_well_formed(order_no):
        return None
    return orders_of_user(user=user).filter(order_no=order_no).first()


def shipping_address_for(*, user: User, address_id: Any = None) -> Address | None:
    """Where a payment ships: the address the shopper chose (`address_id`, one of theirs),
    else their default when they chose none; None when the chosen one is not theirs, or
    they have no address at all."""
    if address_id not in (None, ""):
        return address_of_user(user=user, address_id=address_id)
    return address_default(user=user)


def shipping_address_problem(*, address_id: Any) -> str:
    """Why shipping_address_for found nothing, in the shopper's words."""
    if address_id not in (None, ""):
        return _("That address is not in your address book.")
    return _("Add a shipping address before paying.")


def orders_visible_to(*, user: User) -> QuerySet[Order]:
    """What the admin shows: everything to a superuser, a merchant's own goods' orders otherwise."""
    queryset = Order.objects.select_related("user", "goods", "sale")
    if user.is_superuser:
        return queryset
    return queryset.filter(goods__owner=user)


# The export's columns: (key, heading). Headings are in the merchant's language.
ORDERS_CSV_COLUMNS = [
    ("order_no", gettext_lazy("order number")),
    ("created_at", gettext_lazy("ordered at")),
    ("status", gettext_lazy("status")),
    ("goods_name", gettext_lazy("item")),
    ("price", gettext_lazy("price")),
    ("quantity", gettext_lazy("quantity")),
    ("buyer", gettext_lazy("buyer")),
    ("buyer_mobile", gettext_lazy("buyer's mobile")),
    ("sale_id", gettext_lazy("sale id")),
    ("paid_at", gettext_lazy("paid at")),
    ("cancelled_at", gettext_lazy("cancelled at")),
    ("cancel_reason", gettext_lazy("cancel reason")),
    ("recipient", gettext_lazy("recipient")),
    ("recipient_phone", gettext_lazy("recipient's phone")),
    ("region", gettext_lazy("province or region")),
    ("city", gettext_lazy("city")),
    ("district", gettext_lazy("district")),
    ("street", gettext_lazy("street address")),
    ("postcode", gettext_lazy("postcode")),
    # Filled in by the merchant and uploaded back to ship (orders.fulfilment.shipping_csv).
    ("carrier", gettext_lazy("carrier")),
    ("tracking_no", gettext_lazy("tracking number")),
]
ORDERS_CSV_KEYS = [key for key, _heading in ORDERS_CSV_COLUMNS]


def _csv_safe(value: object) -> str:
    """Text a spreadsheet shows as text: a cell starting with = + - @ would run as a formula
    (the goods name is the merchant's own input, but the file travels)."""
    text = "" if value is None else str(value)
    return "'" + text if text[:1] in ("=", "+", "-", "@", "\t", "\r") else text


def _csv_digits(value: object) -> str:
    """A number that is an identifier (a 24-digit order number, a phone number, a postcode
    with a leading 0), written so Excel keeps it as text: a bare 24-digit cell becomes
    2.02611E+23 and loses its last digits for good. `="..."` is a formula, so only strings
    of ASCII digits are written that way; anything else goes through _csv_safe."""
    text = "" if value is None else str(value)
    if text.isascii() and text.isdigit():
        return f'="{text}"'
    return _csv_safe(text)


def _when(value) -> str:
    return timezone.localtime(value).strftime("%Y-%m-%d %H:%M:%S") if value else ""


def orders_csv_rows(*, orders: QuerySet[Order]) -> Iterator[list[str]]:
    """The header, then one row per order, read in chunks (`iterator`) so an export of a
    big sale never holds every order in memory. `orders` is already scoped to the merchant.
    Times are in the shop's time zone; the shipping address is the copy made at payment."""
    yield [str(heading) for _key, heading in ORDERS_CSV_COLUMNS]
    rows = orders.select_related("user", "address", "shipment").order_by("pk").iterator(chunk_size=2000)
    for order in rows:
        address = order_address(order)
        shipment = order_shipment(order)
        yield [
            _csv_digits(order.order_no),
            _when(order.created_at),
            str(order.get_status_display()),
            _csv_safe(order.item_name),
            str(order.price),
            str(order.quantity),
            _csv_safe(order.user.nickname),
            _csv_digits(order.user.mobile),
            str(order.sale_id or ""),
            _when(order.paid_at),
            _when(order.cancelled_at),
            _csv_safe(gettext(order.cancel_reason) if order.cancel_reason else ""),
            _csv_safe(address.recipient if address else ""),
            _csv_digits(address.phone if address else ""),
            _csv_safe(address.region if address else ""),
            _csv_safe(address.city if address else ""),
            _csv_safe(address.district if address else ""),
            _csv_safe(address.street if address else ""),
            _csv_digits(address.postcode if address else ""),
            str(shipment.get_carrier_display()) if shipment else "",
            _csv_digits(shipment.tracking_no if shipment else ""),
        ]


def _money_taken(prefix: str = "") -> Sum:
    """The money of paid orders, price times quantity; `prefix` reaches the orders from
    another model ("orders__" from a sale). Paid orders only: an unpaid order may still expire
    or be cancelled, and gives its unit back then; it is money promised, not money taken."""
    line_total = ExpressionWrapper(
        F(f"{prefix}price") * F(f"{prefix}quantity"), output_field=DecimalField(max_digits=14, decimal_places=2)
    )
    return Sum(line_total, filter=Q(**{f"{prefix}status__in": PAID_STATUSES}))


def sales_with_order_figures(sales: QuerySet[Sale]) -> QuerySet[Sale]:
    """`sales`, each annotated with its orders: `orders_paid`, `orders_unpaid` and `revenue`
    (paid orders' money; None without any). For the merchant's sale list, which goods' admin
    shows and cannot compute itself (goods does not import orders): orders.admin hands it this."""
    return sales.annotate(
        orders_unpaid=Count("orders", filter=Q(orders__status=OrderStatus.UNPAID)),
        orders_paid=Count("orders", filter=Q(orders__status__in=PAID_STATUSES)),
        revenue=_money_taken("orders__"),
    )


def sale_figures(*, sale: Sale) -> dict[str, Any]:
    """Live figures of one sale for the merchant: stock in both stores, orders by status,
    requests refused by the per-sale limits, and orders per second since the sale started
    (for the chart)."""
    orders = Order.objects.filter(sale=sale)
    by_status = dict(orders.values_list("status").annotate(n=Count("id")))
    revenue = orders.aggregate(total=_money_taken())["total"] or Decimal("0.00")
    per_second = list(
        orders.annotate(second=TruncSecond("created_at")).values("second").annotate(n=Count("id")).order_by("second")
    )
    cumulative, series = 0, []
    for point in per_second:
        cumulative += point["n"]
        series.append({"t": point["second"].timestamp(), "orders": point["n"], "cumulative": cumulative})
    status, remain = sale_status(sale.start_at.timestamp(), sale.end_at.timestamp())
    refused = sale_state.refusals(sale.pk)
    figures = {
        "saleId": sale.pk,
        "status": int(status),
        "remainSeconds": remain,
        "stockDatabase": sale.stock_count,
        "stockRedis": stock_left([sale.pk])[sale.pk],
        "inFlight": sale_state.reservations_count([sale.pk])[sale.pk],
        "unpaid": by_status.get("unpaid", 0),
        "paid": sum(by_status.get(status, 0) for status in PAID_STATUSES),
        "cancelled": by_status.get("cancelled", 0),
        # Requests the per-sale limits refused (seckill.services.paths.sale_limit_take): scripts at work.
        "refusedCaptcha": refused.get("captcha", 0),
        "refusedPath": refused.get("path", 0),
        "revenue": f"{revenue:.2f}",
        # The shop's clock (Redis's, as the sale's status), for the page's clock and chart.
        "serverTime": round(redis_now(), 3),
        "start": sale.start_at.timestamp(),
        "end": sale.end_at.timestamp(),
        "series": series,
        "draw": _draw_figures(sale),
        "cards": {element: value for card in sale_live_cards(sale) for element, value in card.figures.items()},
    }
    return figures


# --- cards the apps above orders add to a sale's live view ---------------------------------------


@dataclass(frozen=True)
class LiveCard:
    """Cards on a sale's live view: `template` renders them, each figure's element by its id;
    `figures` maps those ids to what they show, refreshed with the rest of the page."""

    template: str
    figures: dict[str, Any]


LiveCardsOf = Callable[[Sale], LiveCard | None]
_live_cards: list[LiveCardsOf] = []


def sale_live_cards_add(cards_of: LiveCardsOf) -> None:
    """Have a sale's live view show the cards `cards_of(sale)` returns (None: none for this sale).

    How an app above orders puts its own figures on the live view without orders importing it:
    waitingroom adds a room's queue. Adding the same function again changes nothing.
    """
    if cards_of not in _live_cards:
        _live_cards.append(cards_of)


def sale_live_cards(sale: Sale) -> list[LiveCard]:
    """The cards every function given to sale_live_cards_add has for `sale`."""
    return [card for cards_of in _live_cards if (card := cards_of(sale)) is not None]


def _draw_figures(sale: Sale) -> dict[str, Any] | None:
    """A draw sale's entrants (in all, and a second at a time) and its outcome; None for first
    come, first served. Entrants hold no unit: they are not reservations nor orders."""
    draw = SaleDraw.objects.filter(sale=sale).first()
    if draw is None:
        return None
    entries = sale_state.entries_per_second(sale.pk)
    if draw.drawn_at is None:
        outcome = _("not drawn yet: at %(time)s") % {"time": f"{timezone.localtime(sale.draw_at):%H:%M:%S}"}
    else:
        outcome = _("winners: %(winners)s; entrants: %(entrants)s") % {
            "winners": len(draw.winner_ids),
            "entrants": len(draw.entrant_ids),
        }
    return {
        "entrants": sale_state.entrants_count(sale.pk),
        "entriesPerSecond": [{"t": second, "entries": n} for second, n in sorted(entries.items())],
        "drawn": draw.drawn_at is not None,
        "outcome": outcome,
    }
