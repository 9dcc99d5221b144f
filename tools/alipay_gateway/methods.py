"""`/gateway.do`: the open platform's common request checks, and the server-side methods.

Every request, GET or POST, carries the common parameters (app_id, method, charset, sign_type,
sign, timestamp, version) and `biz_content`, a JSON object. `check` refuses a request as Alipay
does, with an unsigned `error_response` the SDK raises AliPayException for. A method then
answers code 10000 "Success", or 40004 "Business Failed" with a sub_code, both signed.

The browser methods (alipay.trade.page.pay, alipay.trade.wap.pay) pass the same checks, then
go to the cashier (cashier.py).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import date

from tools.alipay_gateway import bill, signing, times
from tools.alipay_gateway.config import Config
from tools.alipay_gateway.trades import BUYER_ID, BUYER_LOGON_ID, BusinessError, Store, amount

PAGE_METHODS = ("alipay.trade.page.pay", "alipay.trade.wap.pay")
SUCCESS = {"code": "10000", "msg": "Success"}
BILL_DATE = re.compile(r"\d{4}-\d{2}-\d{2}")


class ProtocolError(Exception):
    """A request Alipay refuses before any method sees it: 40001 for a missing common parameter,
    40002 for a wrong one."""

    def __init__(self, code: str, sub_code: str, sub_msg: str) -> None:
        super().__init__(f"{sub_code}: {sub_msg}")
        self.code = code
        self.msg = "Missing Required Arguments" if code == "40001" else "Invalid Arguments"
        self.sub_code = sub_code
        self.sub_msg = sub_msg

    def body(self) -> bytes:
        return signing.error_body(self.code, self.msg, self.sub_code, self.sub_msg)


@dataclass(frozen=True)
class Context:
    config: Config
    store: Store
    links: bill.Links
    base_url: str
    """Where the caller reached the gateway, "http://host:port": bill links point there."""


def check(params: Mapping[str, str], config: Config) -> None:
    """Raise ProtocolError unless the common parameters are right and signed by the app's key."""
    for name, sub_code in (
        ("method", "isv.missing-method"),
        ("app_id", "isv.missing-app-id"),
        ("sign_type", "isv.missing-signature-type"),
        ("sign", "isv.missing-signature"),
        ("timestamp", "isv.missing-timestamp"),
        ("version", "isv.missing-version"),
    ):
        if not params.get(name):
            raise ProtocolError("40001", sub_code, f"缺少{name}参数 {name} is missing")
    if params["method"] not in PAGE_METHODS and params["method"] not in METHODS:
        raise ProtocolError("40002", "isv.invalid-method", f"不存在的方法名 No method {params['method']}")
    if params["app_id"] != config.app_id:
        raise ProtocolError("40002", "isv.invalid-app-id", f"无效的AppID参数 No app {params['app_id']}")
    if params.get("charset", "").lower() != "utf-8":
        raise ProtocolError("40002", "isv.invalid-charset", "字符集错误 charset must be utf-8")
    if params["sign_type"] != "RSA2":
        raise ProtocolError("40002", "isv.invalid-signature-type", "无效的签名类型 sign_type must be RSA2")
    try:
        times.parse(params["timestamp"])
    except ValueError:
        raise ProtocolError(
            "40002", "isv.invalid-timestamp", "非法的时间戳参数 timestamp must be yyyy-MM-dd HH:mm:ss"
        ) from None
    if params["version"] != "1.0":
        raise ProtocolError("40002", "isv.invalid-version", "版本号错误 version must be 1.0")
    content = signing.request_content(params)
    if not signing.verify(content, params["sign"], config.keys.app_public):
        # Alipay shows the string it checked, so the merchant can compare it with what it signed.
        raise ProtocolError(
            "40002",
            "isv.invalid-signature",
            f"验签出错，建议检查签名字符串或签名私钥与应用公钥是否匹配 The signature does not verify; "
            f"the gateway checked: {content}",
        )


def biz_content(params: Mapping[str, str]) -> dict[str, object]:
    try:
        content = json.loads(params.get("biz_content") or "{}")
    except ValueError:
        content = None
    if not isinstance(content, dict):
        raise BusinessError("ACQ.INVALID_PARAMETER", "biz_content 不是JSON对象 biz_content is not a JSON object")
    return content


def answer(params: Mapping[str, str], context: Context) -> bytes:
    """The signed body answering a checked server-side request."""
    method = params["method"]
    try:
        result = {**SUCCESS, **METHODS[method](biz_content(params), context)}
    except BusinessError as error:
        result = {"code": "40004", "msg": "Business Failed", "sub_code": error.sub_code, "sub_msg": error.sub_msg}
    return signing.response_body(method, result, context.config.keys.alipay_private)


def _text(biz: Mapping[str, object], name: str) -> str | None:
    value = biz.get(name)
    return None if value is None or value == "" else str(value)


def _trade_keys(biz: Mapping[str, object]) -> tuple[str | None, str | None]:
    out_trade_no, trade_no = _text(biz, "out_trade_no"), _text(biz, "trade_no")
    if out_trade_no is None and trade_no is None:
        raise BusinessError("ACQ.INVALID_PARAMETER", "out_trade_no 和 trade_no 不能同时为空 Name the trade")
    return out_trade_no, trade_no


def query(biz: Mapping[str, object], context: Context) -> dict[str, str]:
    trade = context.store.find(*_trade_keys(biz))
    paid = trade.gmt_payment is not None
    result = {
        "trade_no": trade.trade_no,
        "out_trade_no": trade.out_trade_no,
        "buyer_logon_id": BUYER_LOGON_ID,
        "trade_status": trade.status,
        "total_amount": trade.total_amount,
        "buyer_pay_amount": trade.total_amount if paid else "0.00",
        "receipt_amount": trade.total_amount if paid else "0.00",
        "invoice_amount": trade.total_amount if paid else "0.00",
        "point_amount": "0.00",
    }
    if paid:
        result["buyer_user_id"] = BUYER_ID
        result["send_pay_date"] = trade.gmt_payment or ""
    return result


def close(biz: Mapping[str, object], context: Context) -> dict[str, str]:
    trade = context.store.close(*_trade_keys(biz))
    return {"out_trade_no": trade.out_trade_no, "trade_no": trade.trade_no}


def refund(biz: Mapping[str, object], context: Context) -> dict[str, str]:
    out_trade_no, trade_no = _trade_keys(biz)
    try:
        requested = amount(biz.get("refund_amount"))
    except ValueError:
        raise BusinessError("ACQ.INVALID_PARAMETER", "refund_amount 不是金额 refund_amount is no amount") from None
    trade, made, moved = context.store.refund(
        out_trade_no, trade_no, requested, _text(biz, "out_request_no"), _text(biz, "refund_reason") or ""
    )
    return {
        "trade_no": trade.trade_no,
        "out_trade_no": trade.out_trade_no,
        "buyer_logon_id": BUYER_LOGON_ID,
        "buyer_user_id": BUYER_ID,
        "fund_change": "Y" if moved else "N",
        "refund_fee": made.refund_fee,
        "send_back_fee": made.refund_amount,
        "gmt_refund_pay": made.gmt_refund,
    }


def refund_query(biz: Mapping[str, object], context: Context) -> dict[str, str]:
    """A refund as Alipay reports it; for a trade without that refund, just the trade's numbers
    and no refund_status (Alipay's answer, which the merchant must read as "no such refund")."""
    out_trade_no, trade_no = _trade_keys(biz)
    out_request_no = _text(biz, "out_request_no")
    if out_request_no is None:
        raise BusinessError("ACQ.INVALID_PARAMETER", "out_request_no 不能为空 out_request_no is missing")
    trade = context.store.find(out_trade_no, trade_no)
    result = {"trade_no": trade.trade_no, "out_trade_no": trade.out_trade_no}
    made = next((made for made in trade.refunds if made.out_request_no == out_request_no), None)
    if made is None:
        return result
    result.update(
        out_request_no=made.out_request_no,
        refund_status="REFUND_SUCCESS",
        refund_amount=made.refund_amount,
        total_amount=trade.total_amount,
    )
    # Alipay gives the refund's time only when asked for it.
    if "gmt_refund_pay" in (biz.get("query_options") or []):
        result["gmt_refund_pay"] = made.gmt_refund
    return result


def bill_url(biz: Mapping[str, object], context: Context) -> dict[str, str]:
    """A link to the day's trade bill. Alipay has a day's bill from the next morning; the stand-in
    has it at once (today's, as it stands), so that a test can reconcile what it just did."""
    if biz.get("bill_type") != "trade":
        raise BusinessError("isp.bill_not_exist", "账单不存在 Only the trade bill is kept")
    bill_date = _text(biz, "bill_date") or ""
    try:
        day = date.fromisoformat(bill_date) if BILL_DATE.fullmatch(bill_date) else None
    except ValueError:
        day = None
    if day is None:
        raise BusinessError("isv.invalid-arguments", "bill_date 格式应为 yyyy-MM-dd bill_date is not yyyy-MM-dd")
    if day > times.now().date():
        raise BusinessError("isp.bill_not_exist", "账单不存在 That day has not come")
    token = context.links.issue(day)
    return {"bill_download_url": f"{context.base_url}/bill/{token}.csv.zip"}


METHODS: dict[str, Callable[[Mapping[str, object], Context], dict[str, str]]] = {
    "alipay.trade.query": query,
    "alipay.trade.close": close,
    "alipay.trade.refund": refund,
    "alipay.trade.fastpay.refund.query": refund_query,
    "alipay.data.dataservice.bill.downloadurl.query": bill_url,
}
