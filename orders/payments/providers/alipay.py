"""Alipay's open platform through its Python SDK (python-alipay-sdk): page and mobile-web pay,
the async notify (RSA2), trade.query, trade.close, trade.refund and the daily trade bill.

The gateway's address comes from settings.ALIPAY_GATEWAY, so the same code talks to Alipay,
its sandbox, or the local stand-in `make run` starts (tools/alipay_gateway).
"""

import csv
import io
import logging
import zipfile
from collections.abc import Mapping
from datetime import date, datetime
from decimal import Decimal, InvalidOperation
from functools import cache
from pathlib import Path
from urllib.request import urlopen
from zoneinfo import ZoneInfo

from alipay import AliPay, AliPayConfig
from alipay.exceptions import AliPayException, AliPayValidationError
from django.conf import settings
from django.http import HttpRequest, HttpResponse
from django.utils import timezone
from django.utils.translation import gettext_lazy

from orders.models import Payment, Refund
from orders.payments.providers.base import (
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

logger = logging.getLogger(__name__)

# Alipay reads and writes times in Beijing time.
BEIJING = ZoneInfo("Asia/Shanghai")
_PAID = {"TRADE_SUCCESS", "TRADE_FINISHED"}
_STATES = {"WAIT_BUYER_PAY": TradeState.OPEN, "TRADE_CLOSED": TradeState.CLOSED} | dict.fromkeys(_PAID, TradeState.PAID)
_SUCCESS = "10000"
_NOT_EXIST = "ACQ.TRADE_NOT_EXIST"
# The trade bill's columns this reader uses (Alipay's "业务明细" CSV).
_BILL_TRADE, _BILL_OURS, _BILL_KIND, _BILL_DONE, _BILL_AMOUNT = (
    "支付宝交易号",
    "商户订单号",
    "业务类型",
    "完成时间",
    "订单金额（元）",
)
_BILL_REFUND_NO = "退款批次号/请求号"


def _key(value: str) -> str:
    """A PEM in the setting itself, or the path of a file holding one."""
    return value if "-----BEGIN" in value else Path(value).read_text()


@cache
def _client(app_id: str, gateway: str, private_key: str, public_key: str, timeout: float) -> AliPay:
    client = AliPay(
        appid=app_id,
        app_private_key_string=_key(private_key),
        alipay_public_key_string=_key(public_key),
        sign_type="RSA2",
        config=AliPayConfig(timeout=timeout),
    )
    # The SDK knows only Alipay's and its sandbox's addresses; a deployment names its own.
    client._gateway = gateway
    return client


def client() -> AliPay:
    return _client(
        settings.ALIPAY_APP_ID,
        settings.ALIPAY_GATEWAY,
        settings.ALIPAY_APP_PRIVATE_KEY,
        settings.ALIPAY_PUBLIC_KEY,
        settings.PAYMENT_GATEWAY_TIMEOUT,
    )


def _call(method, **arguments) -> dict:
    """One call to the gateway: its verified answer, GatewayDown when there is none to trust."""
    try:
        return method(**arguments)
    except (OSError, ValueError, AliPayException, AliPayValidationError) as error:
        # OSError covers refused connections, timeouts and HTTP errors (urllib's).
        raise GatewayDown(f"alipay: {type(error).__name__}: {error}") from error


def _beijing_time(text: str | None) -> datetime | None:
    """One of Alipay's times ("2026-12-01 23:59:58", Beijing time); None when absent or garbled."""
    try:
        return datetime.strptime(text, "%Y-%m-%d %H:%M:%S").replace(tzinfo=BEIJING) if text else None
    except ValueError:
        return None


def _amount(text: str | None) -> Decimal | None:
    try:
        return Decimal(text) if text else None
    except InvalidOperation:
        return None


class AlipayProvider(Provider):
    label = gettext_lazy("Alipay")
    # Cards are Alipay's own business: the shopper pays on its cashier page.
    takes_cards = False
    # Paying sends the shopper back with the signed sync return; Alipay has no return for
    # leaving its cashier (its "cancel" is a plain link back).
    signs_return = True

    def configured(self) -> bool:
        return bool(settings.ALIPAY_APP_ID and settings.ALIPAY_APP_PRIVATE_KEY and settings.ALIPAY_PUBLIC_KEY)

    def return_verified(self, params: Mapping[str, str], payment: Payment) -> bool:
        data = dict(params)
        signature = data.pop("sign", "")
        if not signature or data.get("out_trade_no") != payment.trade_no:
            return False
        if data.get("app_id") != settings.ALIPAY_APP_ID:
            return False
        try:
            return bool(client().verify(data, signature))  # pops sign_type, as for a notify
        except Exception:  # any bytes a visitor puts in the address
            return False

    def checkout(self, payment: Payment, *, return_url: str, notify_url: str, mobile: bool) -> Checkout:
        pay = client().api_alipay_trade_wap_pay if mobile else client().api_alipay_trade_page_pay
        query = pay(
            subject=payment.order.item_name,
            out_trade_no=payment.trade_no,
            total_amount=f"{payment.amount:.2f}",
            return_url=return_url,
            notify_url=notify_url,
            # Alipay refuses to open or pay the trade after this: the order's own deadline.
            time_expire=f"{timezone.localtime(payment.order.pay_deadline, BEIJING):%Y-%m-%d %H:%M:%S}",
        )
        return Checkout(redirect_url=f"{settings.ALIPAY_GATEWAY}?{query}")

    def notice(self, request: HttpRequest) -> Notice:
        data = request.POST.dict()
        signature = data.pop("sign", "")
        payload = dict(data)
        if not signature or not data.get("notify_id") or not data.get("out_trade_no"):
            raise NoticeRefused("malformed")
        if any(len(values) > 1 for _, values in request.POST.lists()):
            raise NoticeRefused("malformed")  # Alipay never repeats a field; which one would count?
        try:
            verified = client().verify(data, signature)  # pops sign_type, as Alipay's rule says
        except Exception:  # any bytes an attacker sends: a bad base64, an unknown sign type
            verified = False
        if not verified:
            raise NoticeRefused("signature")
        if payload.get("app_id") != settings.ALIPAY_APP_ID:
            raise NoticeRefused("app")
        if settings.ALIPAY_SELLER_ID and payload.get("seller_id") != settings.ALIPAY_SELLER_ID:
            raise NoticeRefused("seller")
        status = payload.get("trade_status", "")
        return Notice(
            event_id=payload["notify_id"],
            kind=status or "unknown",
            trade_no=payload["out_trade_no"],
            provider_ref=payload.get("trade_no", ""),
            # A refund's notify names the trade's status too, with the refund's fields beside it.
            paid=status in _PAID and not payload.get("refund_fee"),
            refunded=bool(payload.get("refund_fee")),
            amount=_amount(payload.get("total_amount")),
            currency=settings.PAYMENT_CURRENCY,  # Alipay's domestic trades are in yuan
            paid_at=_beijing_time(payload.get("gmt_payment")),
            payload=payload,
        )

    def acknowledgement(self) -> HttpResponse:
        # Alipay stops resending on exactly this body.
        return HttpResponse("success", content_type="text/plain")

    def _trade(self, answer: dict) -> Trade:
        return Trade(
            state=_STATES.get(answer.get("trade_status", ""), TradeState.OPEN),
            provider_ref=answer.get("trade_no", ""),
            amount=_amount(answer.get("total_amount")),
            currency=settings.PAYMENT_CURRENCY,
            paid_at=_beijing_time(answer.get("send_pay_date")),
        )

    def query(self, payment: Payment) -> Trade:
        answer = _call(client().api_alipay_trade_query, out_trade_no=payment.trade_no)
        if answer.get("code") == _SUCCESS:
            return self._trade(answer)
        if answer.get("sub_code") == _NOT_EXIST:
            return Trade(TradeState.UNKNOWN)
        raise GatewayDown(f"alipay query: {answer.get('code')} {answer.get('sub_code')}")

    def close(self, payment: Payment) -> Trade:
        answer = _call(client().api_alipay_trade_close, out_trade_no=payment.trade_no)
        if answer.get("code") == _SUCCESS:
            return Trade(TradeState.CLOSED, provider_ref=answer.get("trade_no", ""))
        if answer.get("sub_code") == _NOT_EXIST:
            return Trade(TradeState.UNKNOWN)
        # Already paid, or already closed: the trade's state says which.
        return self.query(payment)

    def refund(self, refund: Refund) -> str:
        answer = _call(
            client().api_alipay_trade_refund,
            refund_amount=f"{refund.amount:.2f}",
            out_trade_no=refund.payment.trade_no,
            out_request_no=refund.request_no,
            refund_reason=refund.reason[:80],
        )
        if answer.get("code") == _SUCCESS:
            return answer.get("trade_no", "")
        if answer.get("code") == "40004":
            raise ProviderRefused(f"{answer.get('sub_code')}: {answer.get('sub_msg', '')}")
        raise GatewayDown(f"alipay refund: {answer.get('code')} {answer.get('sub_code')}")

    def movements(self, day: date) -> list[Movement]:
        answer = _call(
            client().server_api,
            api_name="alipay.data.dataservice.bill.downloadurl.query",
            biz_content={"bill_type": "trade", "bill_date": day.isoformat()},
        )
        if answer.get("sub_code") == "isp.bill_not_exist":
            return []  # a day with no bill (yet): nothing moved that the bill would show
        if answer.get("code") != _SUCCESS:
            raise GatewayDown(f"alipay bill: {answer.get('code')} {answer.get('sub_code')}")
        try:
            with urlopen(answer["bill_download_url"], timeout=settings.PAYMENT_GATEWAY_TIMEOUT) as response:
                archive = zipfile.ZipFile(io.BytesIO(response.read()))
        except (OSError, KeyError, zipfile.BadZipFile) as error:
            raise GatewayDown(f"alipay bill download: {error}") from error
        return [movement for name in archive.namelist() for movement in _bill_movements(archive.read(name))]


def _bill_movements(raw: bytes) -> list[Movement]:
    """The payments and refunds of one bill file: GBK, `#` comment lines around a CSV table."""
    lines = [line for line in raw.decode("gbk").splitlines() if line.strip() and not line.startswith("#")]
    movements = []
    for row in csv.DictReader(lines):
        row = {key.strip(): (value or "").strip() for key, value in row.items() if key}
        amount = _amount(row.get(_BILL_AMOUNT))
        if amount is None or not row.get(_BILL_OURS):
            continue  # a totals line
        done = datetime.strptime(row[_BILL_DONE], "%Y-%m-%d %H:%M:%S").replace(tzinfo=BEIJING)
        refund = row.get(_BILL_KIND) == "退款"
        movements.append(
            Movement(
                kind="refund" if refund else "payment",
                trade_no=row[_BILL_OURS],
                provider_ref=row.get(_BILL_REFUND_NO, "") if refund else row.get(_BILL_TRADE, ""),
                amount=abs(amount),
                at=done,
            )
        )
    return movements
