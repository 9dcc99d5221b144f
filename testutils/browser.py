"""A real browser at the shop, for the browser tests (e2e/) and the contact sheet: a page that
records console errors, Content-Security-Policy violations and 5xx answers, and the steps
shoppers and merchants take on their pages."""

import time
from pathlib import Path

from sales.sale_state import keys
from seckill_site.redis import client
from testutils.factories.users import PASSWORD, session_for

# Where the browser tests' screenshots land, and the two widths each page is shot at.
SHOTS = Path(__file__).resolve().parent.parent / "e2e-screenshots"
VIEWPORTS = {"desktop": {"width": 1280, "height": 860}, "phone": {"width": 390, "height": 844}}
# How long a paying page may wait for the provider's word (ms): the page polls every 2 s and
# reloads once it lands, the Alipay stand-in retries a notify 2.4, 6 and 6 s after a failed
# attempt, and on a loaded machine the first attempts can miss their answer time.
PROVIDER_WORD_MS = 45_000


def provider_word_awaited(page, text: str) -> None:
    """Wait for `text` on a paying page (the provider's word landed and the page showed it);
    if it never shows, fail with what the page's script asked and was answered meanwhile."""
    seen: list[str] = []
    started = time.monotonic()

    def note(kind: str, detail: str) -> None:
        seen.append(f"{time.monotonic() - started:6.1f}s {kind} {detail}")

    def answered(response) -> None:
        note("answer", f"{response.status} {response.request.resource_type} {response.url}")

    def failed(request) -> None:
        note("failed", f"{request.resource_type} {request.url} {request.failure}")

    def said(message) -> None:
        note("console", f"{message.type} {message.text}")

    page.on("response", answered)
    page.on("requestfailed", failed)
    page.on("console", said)
    try:
        page.wait_for_selector(f"text={text}", timeout=PROVIDER_WORD_MS)
    except Exception as timeout:
        state = page.evaluate("(document.getElementById('paying') || {dataset: {}}).dataset.state")
        shown = page.inner_text("main") if page.locator("main").count() else page.content()[:2000]
        raise AssertionError(
            f"{text!r} never showed at {page.url} (data-state {state!r}):\n{shown}\n" + "\n".join(seen)
        ) from timeout
    finally:
        page.remove_listener("response", answered)
        page.remove_listener("requestfailed", failed)
        page.remove_listener("console", said)


def poll(page, expression: str, seconds: float = 10) -> None:
    """Wait until `expression` is true in the page, asked through the debugging protocol (not
    subject to the page's Content-Security-Policy, unlike wait_for_function's eval())."""
    deadline = time.monotonic() + seconds
    while not page.evaluate(expression):
        assert time.monotonic() < deadline, f"never true: {expression}"
        page.wait_for_timeout(50)


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


WCAG_AA = {"runOnly": {"type": "tag", "values": ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa"]}}


def log_in(page, base_url: str, mobile: str) -> None:
    page.goto(f"{base_url}/user/index")
    page.fill("input[name=mobile]", mobile)
    page.fill("input[name=password]", PASSWORD)
    page.click("form[action$='/user/login'] button[type=submit]")  # not the language switch's
    page.wait_for_url("**/goods/goodsList")


def choose_chinese(tab) -> None:
    """The language switch in the header, as a visitor uses it (a cookie: it outlives logging in)."""
    tab.go("/goods/goodsList")
    tab.page.select_option("#language-select", "zh-hans")
    tab.page.click(".language button[type=submit]")  # the switch applies on its button
    tab.page.wait_for_selector("text=秒杀商品")


def logged_in(tab, user) -> None:
    tab.context.add_cookies([{"name": "sessionid", "value": session_for(user), "url": tab.base_url}])


def captcha_answer(sale, user) -> str:
    return client().get(keys.captcha(sale.pk, user.pk)).decode()


def solve_and_buy(page, sale, user) -> None:
    page.click("#buy")
    poll(page, "document.getElementById('captcha-img').naturalWidth > 0")
    page.fill("#captcha-answer", captcha_answer(sale, user))
    page.click("#captcha-form button[type=submit]")


def admin_log_in(tab, mobile: str, language: str | None = None) -> None:
    if language:
        tab.context.add_cookies([{"name": "django_language", "value": language, "url": tab.base_url}])
    tab.go("/admin/login/")
    tab.page.fill("input[name=username]", mobile)
    tab.page.fill("input[name=password]", PASSWORD)
    tab.page.click("input[type=submit]")
    tab.page.wait_for_selector("#site-name")


def shoot(tab, label: str) -> None:
    """The page as the merchant sees it on a 1280-pixel screen."""
    SHOTS.mkdir(exist_ok=True)
    tab.page.screenshot(path=str(SHOTS / f"{tab.name}-{label}.png"), full_page=True)


def as_merchant(watched, merchant, language: str):
    # axe-core's checks add a <style> element, which the admin's policy refuses (the shopper's
    # pages allow it by nonce): the merchant's tab lets them. e2e/test_merchant.py checks the
    # admin's pages under the policy.
    desk = watched(f"merchant-{language}", bypass_csp=True)
    admin_log_in(desk, merchant.mobile, language)
    return desk
