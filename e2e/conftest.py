"""Browser tests: Playwright driving the system's Chromium (Debian's `chromium` package;
Playwright's own browser download does not work on these machines)."""

import os
import shutil
import time
from pathlib import Path

import pytest

from tools.browser import ARGS, CHROMIUM
from tools.missing import missing

SHOTS = Path(__file__).resolve().parent.parent / "e2e-screenshots"
VIEWPORTS = {"desktop": {"width": 1280, "height": 860}, "phone": {"width": 390, "height": 844}}


def poll(page, expression: str, seconds: float = 10) -> None:
    """Wait until `expression` is true in the page, asked through the debugging protocol (not
    subject to the page's Content-Security-Policy, unlike wait_for_function's eval())."""
    deadline = time.monotonic() + seconds
    while not page.evaluate(expression):
        assert time.monotonic() < deadline, f"never true: {expression}"
        page.wait_for_timeout(50)


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


# Every document reports each Content-Security-Policy violation to the test (the event fires
# for blocked scripts, styles, images, inline handlers and eval alike), before any script of
# the page runs; the binding survives navigations.
CSP_LISTENER = """
document.addEventListener("securitypolicyviolation", function (e) {
  window.__cspViolation([e.violatedDirective, e.blockedURI, e.sourceFile + ":" + e.lineNumber,
                         location.pathname].join(" "));
});
"""


class Watched:
    """A page that records console errors, Content-Security-Policy violations and 5xx answers,
    and screenshots at two widths."""

    def __init__(self, browser, base_url: str, name: str, **context_options):
        # context_options: Playwright's, e.g. timezone_id for a browser in another zone.
        self.context = browser.new_context(viewport=VIEWPORTS["desktop"], **context_options)
        self.csp_violations: list[str] = []
        self.context.expose_binding("__cspViolation", lambda _source, text: self.csp_violations.append(text))
        self.context.add_init_script(CSP_LISTENER)
        self.page = self.context.new_page()
        self.base_url, self.name = base_url, name
        self.console_errors: list[str] = []
        self.server_errors: list[str] = []
        self.page.on("console", lambda m: self.console_errors.append(m.text) if m.type == "error" else None)
        self.missing: list[str] = []  # names the resource behind a console "404" error
        self.page.on("response", self._record)

    def _record(self, response) -> None:
        if response.status >= 500:
            self.server_errors.append(f"{response.status} {response.url}")
        elif response.status == 404:
            self.missing.append(response.url)

    def go(self, path: str):
        self.page.goto(self.base_url + path)
        return self.page

    def forget_visitor(self) -> None:
        """Leave the page, then forget the cookies: as a new visitor. Leaving first matters: a
        request the old page still had in flight (nav.js asks /user/me, which issues a CSRF
        cookie to a visitor without one) could otherwise set a second CSRF cookie after the next
        page's, and that page's form would then fail the CSRF check (a 403 seen under load)."""
        self.page.goto("about:blank")
        self.context.clear_cookies()

    def shoot(self, label: str) -> None:
        SHOTS.mkdir(exist_ok=True)
        for width_name, viewport in VIEWPORTS.items():
            self.page.set_viewport_size(viewport)
            self.page.wait_for_timeout(150)
            # A layout break at 360 px shows as horizontal scrolling.
            overflow = self.page.evaluate("document.documentElement.scrollWidth - window.innerWidth")
            assert overflow <= 1, f"{label}: {overflow}px wider than a {viewport['width']}px screen"
            self.page.screenshot(path=str(SHOTS / f"{self.name}-{label}-{width_name}.png"), full_page=True)
        self.page.set_viewport_size(VIEWPORTS["desktop"])

    def check(self) -> None:
        assert not self.server_errors, self.server_errors
        assert not self.csp_violations, self.csp_violations
        assert not self.console_errors, (self.console_errors, self.missing)
        self.context.close()


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
