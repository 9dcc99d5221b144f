"""The system's Chromium as the browser tests and the lab drive it through Playwright (Debian's
`chromium` package; Playwright's own browser download does not work on these machines)."""

import os

CHROMIUM = os.environ.get("CHROMIUM", "/usr/bin/chromium")
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
        "--disable-background-networking", "--disable-component-update", "--disable-sync"]  # fmt: skip
