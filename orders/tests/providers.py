"""A shopper at the providers' stand-ins, through their own pages and control APIs, for tests:
the shop sees only what the real providers would send it."""

from urllib.request import urlopen

from django.conf import settings

from tools.payment_services import alipay_control


def alipay_cashier_open(url: str) -> str:
    """Open Alipay's cashier page as the shopper's browser does (this makes the trade there)."""
    with urlopen(url, timeout=10) as response:
        return response.read().decode()


def alipay_buyer_pays(trade_no: str) -> dict:
    """The buyer presses "pay" on the open cashier: the trade is paid at Alipay, which then
    sends its notify to the attempt's notify_url."""
    return alipay_control(settings.ALIPAY_GATEWAY, f"pay/{trade_no}")
