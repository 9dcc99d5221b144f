"""Browser tests: Playwright driving the system's Chromium (Debian's `chromium` package;
Playwright's own browser download does not work on these machines)."""

import os
import shutil

import pytest

from testutils.browser import Watched
from tools.browser import ARGS, CHROMIUM
from tools.missing import missing


def pytest_collection_modifyitems(config, items):
    reason = None
    if not shutil.which(CHROMIUM):
        reason = missing(f"no Chromium at {CHROMIUM}: the browser tests did not run", "chromium")
    else:
        try:
            import playwright  # noqa: F401
        except ImportError:
            reason = "playwright not installed: browser tests skipped"
    if reason:
        for item in items:
            if "e2e" in str(item.fspath):
                item.add_marker(pytest.mark.skip(reason=reason))


@pytest.fixture(scope="session")
def browser():
    from playwright.sync_api import sync_playwright

    # Playwright's sync API runs an event loop in the test thread; the ORM calls the tests
    # make around it are synchronous and safe. Only while the browser is open.
    os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = "true"
    try:
        with sync_playwright() as playwright:
            chromium = playwright.chromium.launch(executable_path=CHROMIUM, args=ARGS)
            yield chromium
            chromium.close()
    finally:
        os.environ.pop("DJANGO_ALLOW_ASYNC_UNSAFE", None)


@pytest.fixture
def watched(browser, live_server, request):
    pages = []

    def open_page(name: str, **context_options) -> Watched:
        page = Watched(browser, live_server.url, f"{request.node.name}-{name}", **context_options)
        pages.append(page)
        return page

    yield open_page
    for page in pages:
        page.check()
