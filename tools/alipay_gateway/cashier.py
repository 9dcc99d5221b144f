"""The buyer's side: the cashier page a page-pay or wap-pay request opens in the browser, its two
buttons, and the signed way back to the merchant's return_url.

- `visit`: a checked alipay.trade.page.pay / wap.pay request opens (first time: creates) the
  trade and shows the cashier, or a page saying why it cannot be paid.
- `pay`: the buyer pays; then a 302 to return_url with Alipay's signed sync return parameters.
- `cancel`: the buyer leaves; the trade stays WAIT_BUYER_PAY, and a link (unsigned, as Alipay has
  no cancel return) leads back to return_url.

Pages are plain HTML with their style inline, Chinese with English beneath, narrow enough for a
phone. The buttons have the ids `pay` and `cancel`.
"""

from __future__ import annotations

import html
import urllib.parse
from collections.abc import Mapping
from dataclasses import dataclass

from tools.alipay_gateway import signing, times
from tools.alipay_gateway.config import Config
from tools.alipay_gateway.methods import Context, biz_content
from tools.alipay_gateway.trades import (
    AMOUNT_MAX,
    AMOUNT_MIN,
    OUT_TRADE_NO,
    TRADE_CLOSED,
    WAIT_BUYER_PAY,
    BusinessError,
    Order,
    Trade,
    amount,
    yuan,
)

# Alipay: a subject of at most 256 characters, without / = or &.
SUBJECT_LONGEST = 256
SUBJECT_FORBIDDEN = "/=&"


@dataclass(frozen=True)
class Reply:
    status: int
    body: bytes = b""
    location: str | None = None


def order(params: Mapping[str, str]) -> Order:
    """The order a checked page-pay or wap-pay request asks for; BusinessError if Alipay would
    refuse it."""
    biz = biz_content(params)
    out_trade_no = str(biz.get("out_trade_no") or "")
    if not OUT_TRADE_NO.fullmatch(out_trade_no):
        raise BusinessError("ACQ.INVALID_PARAMETER", "out_trade_no 须为64位内的字母、数字、下划线 Letters, digits, _")
    try:
        total = amount(biz.get("total_amount"))
    except ValueError:
        total = AMOUNT_MIN - 1
    if not AMOUNT_MIN <= total <= AMOUNT_MAX:
        raise BusinessError("ACQ.INVALID_PARAMETER", "total_amount 须在0.01至100000000之间 Out of range")
    subject = str(biz.get("subject") or "")
    if not subject or len(subject) > SUBJECT_LONGEST or any(mark in subject for mark in SUBJECT_FORBIDDEN):
        raise BusinessError(
            "ACQ.INVALID_PARAMETER", "subject 须为256字内且不含 / = & Subject is empty, long or has / = &"
        )
    return Order(
        method=params["method"],
        out_trade_no=out_trade_no,
        subject=subject,
        total_amount=yuan(total),
        product_code=str(biz.get("product_code") or ""),
        time_expire=_expiry(biz),
        notify_url=params.get("notify_url", ""),
        return_url=params.get("return_url", ""),
    )


def _expiry(biz: Mapping[str, object]) -> str | None:
    """When the trade closes unpaid: time_expire if given (Alipay prefers it), else timeout_express
    from now, else never."""
    try:
        if biz.get("time_expire"):
            return times.text(times.parse(str(biz["time_expire"])))
        if biz.get("timeout_express"):
            return times.text(times.timeout_end(str(biz["timeout_express"]), times.now()))
    except ValueError as error:
        raise BusinessError("ACQ.INVALID_PARAMETER", f"超时时间格式错误 {error}") from None
    return None


def visit(params: Mapping[str, str], context: Context) -> Reply:
    try:
        trade = context.store.open(order(params))
    except BusinessError as error:
        return _failure(error)
    if trade.status == WAIT_BUYER_PAY:
        return Reply(200, _cashier(trade))
    if trade.status == TRADE_CLOSED:
        return _notice("交易已关闭", "This trade is closed", "它已超时或被商户关闭。 It expired or the shop closed it.")
    return _notice("该订单已支付", "This order is paid already", "", return_link(trade, context.config))


def pay(out_trade_no: str, context: Context) -> Reply:
    """The pay button: TRADE_SUCCESS, then back to the merchant as Alipay sends the buyer back."""
    try:
        trade = context.store.pay(out_trade_no)
    except BusinessError as error:
        if error.sub_code == "ACQ.TRADE_HAS_SUCCESS":
            paid = context.store.find(out_trade_no, None)
            return _notice("该订单已支付", "This order is paid already", "", return_link(paid, context.config))
        return _failure(error)
    link = return_link(trade, context.config)
    if link is None:
        return _notice("支付成功", "Paid", f"¥ {trade.total_amount} · {trade.out_trade_no}")
    return Reply(302, location=link)


def cancel(out_trade_no: str, context: Context) -> Reply:
    try:
        trade = context.store.find(out_trade_no, None)
    except BusinessError as error:
        return _failure(error)
    return _notice(
        "已取消",
        "You left the cashier",
        "订单未支付，仍可稍后支付。 The order is not paid; it can still be paid later.",
        trade.return_url or None,
    )


def return_link(trade: Trade, config: Config) -> str | None:
    """return_url with Alipay's signed sync return parameters (signed like a notify: all but sign
    and sign_type); None when the merchant gave no return_url."""
    if not trade.return_url:
        return None
    params = signing.signed_callback(
        {
            "method": f"{trade.method}.return",
            "app_id": config.app_id,
            "auth_app_id": config.app_id,
            "charset": "utf-8",
            "version": "1.0",
            "timestamp": times.text(times.now()),
            "out_trade_no": trade.out_trade_no,
            "trade_no": trade.trade_no,
            "total_amount": trade.total_amount,
            "seller_id": config.seller_id,
        },
        config.keys.alipay_private,
    )
    parts = urllib.parse.urlsplit(trade.return_url)
    query = "&".join(part for part in (parts.query, urllib.parse.urlencode(params)) if part)
    return urllib.parse.urlunsplit(parts._replace(query=query))


def _failure(error: BusinessError) -> Reply:
    status = 404 if error.sub_code == "ACQ.TRADE_NOT_EXIST" else 200
    body = f"<p>{_e(error.sub_msg)}</p><p><code>{_e(error.sub_code)}</code></p>"
    return Reply(status, _page("无法付款", "This cannot be paid", body))


def _notice(title: str, english: str, message: str, link: str | None = None) -> Reply:
    body = f"<p>{_e(message)}</p>" if message else ""
    if link:
        body += f'<p><a id="back" href="{_e(link)}">返回商户 <span class="en">Back to the shop</span></a></p>'
    return Reply(200, _page(title, english, body))


def _cashier(trade: Trade) -> bytes:
    path = urllib.parse.quote(trade.out_trade_no)
    rows = [
        ("商品", "Subject", trade.subject),
        ("商户订单号", "Merchant order no.", trade.out_trade_no),
        ("支付宝交易号", "Alipay trade no.", trade.trade_no),
    ]
    if trade.time_expire:
        rows.append(("付款截止", "Pay before (Beijing time)", trade.time_expire))
    details = "".join(f'<dt>{zh}<span class="en">{en}</span></dt><dd>{_e(value)}</dd>' for zh, en, value in rows)
    body = (
        f'<p>订单金额 <span class="en">Amount</span></p><p class="amount" id="amount">¥ {_e(trade.total_amount)}</p>'
        f"<dl>{details}</dl>"
        f'<form method="post" action="/cashier/{path}/pay"><button id="pay" type="submit">确认付款 Pay</button></form>'
        f'<form method="post" action="/cashier/{path}/cancel">'
        f'<button id="cancel" type="submit">取消 Cancel</button></form>'
    )
    return _page("确认付款", "Confirm the payment", body)


def _page(title: str, english: str, body: str) -> bytes:
    return f"""<!doctype html>
<html lang="zh-CN"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<link rel="icon" href="data:,">
<title>{_e(title)} · 支付宝 Alipay</title>
<style>{STYLE}</style></head>
<body><header>支付宝 收银台<span class="en">Alipay cashier · local stand-in, no real money</span></header>
<main><h1>{_e(title)}<span class="en">{_e(english)}</span></h1>{body}</main></body></html>
""".encode()


def _e(text: str) -> str:
    return html.escape(text, quote=True)


STYLE = """
body{margin:0;font:16px/1.5 system-ui,-apple-system,"PingFang SC","Microsoft YaHei",sans-serif;
background:#f5f6f7;color:#222}
header{background:#1677ff;color:#fff;padding:12px 16px;font-size:18px}
main{max-width:480px;margin:16px auto;padding:16px;background:#fff;border-radius:8px}
h1{font-size:20px;margin:0 0 12px}
.en{display:block;font-size:13px;font-weight:normal;opacity:.75}
.amount{font-size:32px;font-weight:600;margin:4px 0 12px}
dl{display:grid;grid-template-columns:auto 1fr;gap:8px 12px;font-size:14px}
dt{color:#666}dd{margin:0;word-break:break-all}
button{width:100%;padding:12px;font-size:16px;border:0;border-radius:6px;margin-top:10px;cursor:pointer}
#pay{background:#1677ff;color:#fff}#cancel{background:#e8e8e8;color:#333}
code{font-size:13px;color:#666}
"""
