"""What the gateway is told at start: whose gateway it is and how it signs."""

from __future__ import annotations

from dataclasses import dataclass

from tools.alipay_gateway.keys import Keys

DEFAULT_APP_ID = "2021000000000001"
DEFAULT_SELLER_ID = "2088000000000001"
# Alipay's retry schedule (about 25 h) times this: 2.4 s, 6 s, 6 s, 36 s, ... by default.
DEFAULT_RETRY_SCALE = 0.01


@dataclass(frozen=True)
class Config:
    app_id: str
    """The one merchant app the gateway serves; requests naming another are refused."""
    seller_id: str
    """The merchant's PID (2088...), as notifies, returns and bills name it."""
    keys: Keys
    retry_scale: float = DEFAULT_RETRY_SCALE
