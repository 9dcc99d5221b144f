"""One running gateway's parts, wired together: its config, the trades, the notifier, the bill
links, and the emulated outage the control endpoints switch on."""

from __future__ import annotations

import threading
import time
from pathlib import Path

from tools.alipay_gateway import bill
from tools.alipay_gateway.config import Config
from tools.alipay_gateway.methods import Context
from tools.alipay_gateway.notify import Notifier
from tools.alipay_gateway.trades import Store

STATE_FILE = "trades.json"


class Gateway:
    """Keeps its trades in `state_dir`/trades.json; `start` resumes the notifies owed there."""

    def __init__(self, config: Config, state_dir: Path) -> None:
        self.config = config
        self.links = bill.Links()
        # The store reports each new notification to the notifier, made just below.
        self.store = Store(
            state_dir / STATE_FILE,
            app_id=config.app_id,
            seller_id=config.seller_id,
            owed=lambda notify_id: self.notifier.owe(notify_id),
        )
        self.notifier = Notifier(self.store, config.keys.alipay_private, config.retry_scale)
        self._lock = threading.Lock()
        self._outage_until = 0.0

    def start(self) -> None:
        self.notifier.start()

    def stop(self) -> None:
        self.notifier.stop()
        self.store.shutdown()

    def context(self, base_url: str) -> Context:
        return Context(config=self.config, store=self.store, links=self.links, base_url=base_url)

    def outage(self, seconds: float) -> None:
        """For `seconds` from now the gateway and cashier answer 503; 0 ends an outage."""
        with self._lock:
            self._outage_until = time.monotonic() + seconds if seconds > 0 else 0.0

    @property
    def outage_left(self) -> float:
        """Seconds of outage left; 0 when the gateway is up."""
        with self._lock:
            return max(0.0, self._outage_until - time.monotonic())
