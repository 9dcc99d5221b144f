"""The control endpoints: not Alipay's, but how tests and fault runs drive the stand-in, as
localstripe's `/_config` does. Each returns an HTTP status and a JSON-ready answer.

    POST   /_control/pay/<out_trade_no>          pay as the buyer would; 404 unknown, 409 not payable
    POST   /_control/create                      open the trade a signed page-pay form names
    POST   /_control/notify/<out_trade_no>       send the trade's latest notify again, now
    POST   /_control/notifications?hold=1|0      hold notifies back ("notify lost"), or let them go
    POST   /_control/outage?seconds=N            503 from the gateway and cashier for N s (0 ends it)
    GET    /_control/trades                      every trade, its refunds and notifies
    DELETE /_control/data                        forget every trade
"""

from __future__ import annotations

import urllib.parse
from collections.abc import Mapping
from dataclasses import asdict

from tools.alipay_gateway import cashier, methods
from tools.alipay_gateway.gateway import Gateway
from tools.alipay_gateway.trades import BusinessError

Answer = tuple[int, dict[str, object]]


def pay(gateway: Gateway, out_trade_no: str) -> Answer:
    try:
        trade = gateway.store.pay(out_trade_no)
    except BusinessError as error:
        return (404 if error.sub_code == "ACQ.TRADE_NOT_EXIST" else 409), _refusal(error)
    return 200, {
        "out_trade_no": trade.out_trade_no,
        "trade_no": trade.trade_no,
        "trade_status": trade.status,
        "gmt_payment": trade.gmt_payment,
        "return_url": cashier.return_link(trade, gateway.config),
    }


def create(gateway: Gateway, params: Mapping[str, str], base_url: str) -> Answer:
    """What a browser's first visit to the cashier does, for callers that are no browser."""
    try:
        methods.check(params, gateway.config)
        if params["method"] not in methods.PAGE_METHODS:
            return 400, {"error": f"{params['method']} opens no cashier"}
        trade = gateway.store.open(cashier.order(params))
    except methods.ProtocolError as error:
        return 400, {"error_response": {"code": error.code, "sub_code": error.sub_code, "sub_msg": error.sub_msg}}
    except BusinessError as error:
        return 409, _refusal(error)
    return 200, {
        "out_trade_no": trade.out_trade_no,
        "trade_no": trade.trade_no,
        "trade_status": trade.status,
        "cashier_url": f"{base_url}/gateway.do?{urllib.parse.urlencode(params)}",
    }


def notify_again(gateway: Gateway, out_trade_no: str) -> Answer:
    notification = gateway.store.latest_notification(out_trade_no)
    if notification is None:
        return 404, {"error": f"no notify for {out_trade_no}"}
    delivery = gateway.notifier.send_now(notification.notify_id)
    return 200, {"notify_id": notification.notify_id, "delivery": asdict(delivery) if delivery else None}


def notifications(gateway: Gateway, hold: str | None) -> Answer:
    if hold not in ("0", "1"):
        return 400, {"error": "hold=1 or hold=0"}
    gateway.notifier.hold(hold == "1")
    return 200, {"hold": gateway.notifier.held}


def outage(gateway: Gateway, seconds: str | None) -> Answer:
    try:
        length = float(seconds or "")
    except ValueError:
        return 400, {"error": "seconds=N"}
    gateway.outage(length)
    return 200, {"outage_left": gateway.outage_left}


def trades(gateway: Gateway) -> Answer:
    found = gateway.store.snapshot()
    for trade in found:
        for notification in trade["notifications"]:
            deliveries = notification["deliveries"]
            notification["count"] = len(deliveries)
            notification["last_status"] = deliveries[-1]["status"] if deliveries else None
            notification["last_answer"] = deliveries[-1]["answer"] if deliveries else None
    return 200, {"hold": gateway.notifier.held, "outage_left": gateway.outage_left, "trades": found}


def forget(gateway: Gateway) -> Answer:
    gateway.store.clear()
    return 200, {"trades": 0}


def _refusal(error: BusinessError) -> dict[str, object]:
    return {"code": "40004", "sub_code": error.sub_code, "sub_msg": error.sub_msg}
