"""A shopper at the providers' stand-ins, through their own pages and control APIs, for tests:
the shop sees only what the real providers would send it."""

import http.server
import threading
import time
from urllib.request import urlopen

from django.conf import settings

from tools.payment_services import alipay_control

# Stripe's test cards: paid, declined at confirmation, and one that asks for 3-D Secure.
CARD_GOOD, CARD_DECLINED, CARD_ASKS_3DS = "4242424242424242", "4000000000000341", "4000002760003184"

# The in-process dummy provider (orders.payments.providers.dummy), registered by the `dummy` fixture.
DUMMY_PATH = "orders.payments.providers.dummy.DummyProvider"


def alipay_cashier_open(url: str) -> str:
    """Open Alipay's cashier page as the shopper's browser does (this makes the trade there)."""
    with urlopen(url, timeout=10) as response:
        return response.read().decode()


def alipay_buyer_pays(trade_no: str) -> dict:
    """The buyer presses "pay" on the open cashier: the trade is paid at Alipay, which then
    sends its notify to the attempt's notify_url."""
    return alipay_control(settings.ALIPAY_GATEWAY, f"pay/{trade_no}")


class Receiver:
    """A notify_url on loopback that keeps what the provider sent and answers `answer`."""

    def __init__(self, answer: bytes = b"success") -> None:
        self.bodies: list[bytes] = []
        outer = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_POST(self):
                outer.bodies.append(self.rfile.read(int(self.headers["Content-Length"])))
                self.send_response(200)
                self.end_headers()
                self.wfile.write(answer)

            def log_message(self, *args):
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/notify"

    def wait(self, count: int = 1, timeout: float = 10) -> bytes:
        deadline = time.monotonic() + timeout
        while len(self.bodies) < count and time.monotonic() < deadline:
            time.sleep(0.02)
        assert len(self.bodies) >= count, "the provider sent no notification"
        return self.bodies[count - 1]

    def notify_for(self, trade_no: str, timeout: float = 10) -> bytes:
        """The first notification about our trade `trade_no`."""
        needle = f"out_trade_no={trade_no}&".encode()
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            found = next((body for body in list(self.bodies) if needle in body + b"&"), None)
            if found is not None:
                return found
            time.sleep(0.02)
        raise AssertionError(f"no notification about {trade_no}")

    def close(self) -> None:
        self.server.shutdown()


def stripe_card_token(number: str) -> str:
    """A card token from Stripe's stand-in, as Stripe.js makes one in the shopper's browser."""
    import requests

    answer = requests.post(
        f"{settings.STRIPE_API_BASE}/v1/tokens",
        data={
            "card[number]": number,
            "card[exp_month]": "12",
            "card[exp_year]": "2030",
            "card[cvc]": "123",
            "key": settings.STRIPE_PUBLISHABLE_KEY,
        },
        timeout=10,
    )
    return answer.json()["id"]
