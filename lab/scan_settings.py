"""`make scan` (lab/scan.py): the production settings as they stand, with the per-request rate
limits (django-ratelimit: logins, registrations, captchas, the API's throttles) switched off, so
that the scanner's payloads reach the views behind them instead of a 429 after the 30th
request. The limits themselves are the test suite's to check."""

from seckill_site.settings.production import *  # noqa: F403

RATELIMIT_ENABLE = False
