"""The command line: `python -m tools.alipay_gateway --host H --port P --state DIR [...]`.

Makes the keys in DIR if missing, loads DIR/trades.json if there, prints one line
`alipay gateway on http://H:P` once it listens, logs to stderr, and stops cleanly on SIGTERM or
SIGINT.
"""

from __future__ import annotations

import argparse
import logging
import signal
import sys
import threading
from pathlib import Path

from tools.alipay_gateway import keys, server
from tools.alipay_gateway.config import DEFAULT_APP_ID, DEFAULT_RETRY_SCALE, DEFAULT_SELLER_ID, Config


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m tools.alipay_gateway", description=__doc__.split("\n\n")[0])
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=0, help="0: any free port (the printed line names it)")
    parser.add_argument("--state", type=Path, required=True, help="keys and trades.json live here")
    parser.add_argument("--app-id", default=DEFAULT_APP_ID, help="the merchant app the gateway serves")
    parser.add_argument("--seller-id", default=DEFAULT_SELLER_ID, help="the merchant's PID (2088...)")
    parser.add_argument(
        "--retry-scale",
        type=float,
        default=DEFAULT_RETRY_SCALE,
        help="Alipay's notify retry schedule (4m, 10m, 10m, 1h, 2h, 6h, 15h) times this",
    )
    args = parser.parse_args(argv)
    if args.retry_scale < 0:
        parser.error("--retry-scale must be 0 or more")
    logging.basicConfig(
        stream=sys.stderr, level=logging.INFO, format="[alipay %(asctime)s] %(message)s", datefmt="%H:%M:%S"
    )

    config = Config(
        app_id=args.app_id, seller_id=args.seller_id, keys=keys.ensure(args.state), retry_scale=args.retry_scale
    )
    stopping = threading.Event()
    for signum in (signal.SIGTERM, signal.SIGINT):
        signal.signal(signum, lambda *_: stopping.set())
    running = server.start(config, args.state, args.host, args.port)
    print(f"alipay gateway on {running.url}", flush=True)
    stopping.wait()
    running.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
