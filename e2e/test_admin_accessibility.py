"""WCAG 2.1 AA on the merchant's side, measured in the browser with axe-core: every admin screen
the merchant translation test reads (sales.tests.test_admin_translations.MERCHANT_SCREENS: lists,
filters, forms, an order in each state, the shipping desk, the live view), in English and
Chinese, has no violation."""

import pytest
from axe_playwright_python.sync_playwright import Axe

from testutils.browser import WCAG_AA, as_merchant, poll
from testutils.merchant_screens import MERCHANT_SCREENS

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.slow]

# axe-core's preload fetches each stylesheet again and resolves the admin's forms.css
# `@import url('widgets.css')` against the page instead of the sheet: a 404 of the tool's own.
# The only rule that reads the preloaded sheets is css-orientation-lock, which the admin's
# media queries do not touch.
AXE_OPTIONS = {**WCAG_AA, "preload": False}


@pytest.mark.parametrize("language", ["en", "zh-hans"])
def test_every_merchant_screen_meets_wcag_aa(watched, shop, language):  # noqa: F811
    ids = {name: getattr(obj, "pk", None) for name, obj in shop.items()}
    desk = as_merchant(watched, shop["merchant"], language)
    axe = Axe()
    failures = {}
    for method, url, *_data in MERCHANT_SCREENS:
        if method != "get":
            continue
        page = desk.go(url.format(**ids))  # returns once the page has loaded
        if "/live/" in url:
            # Not "networkidle": the live view asks for its figures every 2 s, and on a loaded
            # machine its requests overlap so that the network never rests for 500 ms. Its
            # first figures drawn (the shop's clock replaces the dash) is what axe must see.
            poll(page, "document.getElementById('server-clock').textContent !== '\u2013'", seconds=30)
        results = axe.run(page, options=AXE_OPTIONS)
        if results.violations_count:
            failures[url] = results.generate_report()
    assert not failures, "\n\n".join(f"{url}\n{report}" for url, report in failures.items())
