"""A local stand-in for Alipay's open platform gateway (开放平台, /gateway.do), so the shop, `make
run` and the tests take Alipay payments through the real python-alipay-sdk with no credentials
and no network. docs/alipay-gateway.md says what it emulates and what it does not.

    python -m tools.alipay_gateway --host 127.0.0.1 --port PORT --state DIR

Modules, each with one job: keys (the two RSA key pairs), signing (RSA2 content strings and
signatures), times (Beijing time), trades (the state and its rules), notify (the async notify
and its retries), methods (the common checks and the server-side methods), cashier (the buyer's
pages), bill (the trade bill), gateway (the parts wired together), control (the test endpoints),
server (HTTP) and __main__ (the command line).
"""
