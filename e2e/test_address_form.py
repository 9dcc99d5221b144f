"""The address form's province, city and district in the browser: filled by keyboard alone, on
a phone and a desktop, in English and Chinese, each choice narrowing the next (static/js/
divisions.js), Enter saving it, and axe-core finding no WCAG 2.1 AA violation; then the same
form without JavaScript, through its "show" button."""

import pytest
from axe_playwright_python.sync_playwright import Axe

from testutils.browser import VIEWPORTS, poll
from testutils.factories.users import make_user, session_for
from users.models import Address

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.slow]

WCAG_AA = {"runOnly": {"type": "tag", "values": ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa"]}}
SCRIPT_READY = "!document.querySelector('.divisions-show')"  # the script removes the button once it has the data


def sign_in(tab, user, language: str) -> None:
    tab.forget_visitor()
    tab.context.add_cookies(
        [
            {"name": "django_language", "value": language, "url": tab.base_url},
            {"name": "sessionid", "value": session_for(user), "url": tab.base_url},
        ]
    )


def choose(page, name: str, text: str) -> None:
    """Move a focused select to the option `text` with the arrow keys, as a keyboard user does."""
    options = page.eval_on_selector(f"select[name={name}]", "s => Array.from(s.options, o => o.text)")
    steps = options.index(text) - page.eval_on_selector(f"select[name={name}]", "s => s.selectedIndex")
    for _ in range(abs(steps)):
        page.keyboard.press("ArrowDown" if steps > 0 else "ArrowUp")
    assert page.eval_on_selector(f"select[name={name}]", "s => s.value") == text


def axe_violations(page) -> str:
    results = Axe().run(page, options=WCAG_AA)
    return results.generate_report() if results.violations_count else ""


@pytest.mark.parametrize("language", ["en", "zh-hans"])
@pytest.mark.parametrize("viewport", ["phone", "desktop"])
def test_the_address_form_is_filled_by_keyboard_and_meets_wcag_aa(watched, language, viewport):
    me = make_user(nickname="Ann")
    tab = watched(f"address-{language}-{viewport}")
    sign_in(tab, me, language)
    tab.page.set_viewport_size(VIEWPORTS[viewport])
    page = tab.go("/user/addresses")
    poll(page, SCRIPT_READY)
    assert not axe_violations(page), axe_violations(page)
    assert page.is_disabled("select[name=city]") and page.is_disabled("select[name=district]")

    page.focus("input[name=recipient]")
    page.keyboard.type("王小明")
    page.keyboard.press("Tab")
    page.keyboard.type("13712345678")
    page.keyboard.press("Tab")
    choose(page, "region", "浙江省")
    page.keyboard.press("Tab")  # to the city, filled with Zhejiang's cities
    choose(page, "city", "杭州市")
    page.keyboard.press("Tab")
    choose(page, "district", "西湖区")
    page.keyboard.press("Tab")
    page.keyboard.type("文三路 100 号 3 幢 501 室")
    page.keyboard.press("Tab")
    page.keyboard.type("310000")
    if viewport == "desktop":
        tab.shoot("filled")  # both widths of the filled form, for the contact sheet
        page.set_viewport_size(VIEWPORTS[viewport])
    with page.expect_navigation():
        page.keyboard.press("Enter")  # the save button is the form's default again
    saved = Address.objects.get(user=me)
    assert (saved.region, saved.city, saved.district) == ("浙江省", "杭州市", "西湖区")
    assert "浙江省 杭州市 西湖区 文三路 100 号 3 幢 501 室" in page.inner_text(".addresses")

    # A municipality: its one city is chosen with it, its districts offered at once.
    page.focus("select[name=region]")
    choose(page, "region", "北京市")
    assert page.eval_on_selector("select[name=city]", "s => s.value") == "北京市"
    page.keyboard.press("Tab")
    page.keyboard.press("Tab")
    choose(page, "district", "朝阳区")
    # Hong Kong: the table names no cities, and both lower selects say so.
    page.focus("select[name=region]")
    choose(page, "region", "香港特别行政区")
    assert page.is_disabled("select[name=city]") and page.is_disabled("select[name=district]")

    # A refused mix shows its error beside the field, still with no axe violation.
    page.focus("select[name=region]")
    choose(page, "region", "浙江省")
    page.click("form[aria-labelledby=add-address] button.primary")
    page.wait_for_load_state("networkidle")
    assert page.locator(".field-error").count() >= 1
    poll(page, SCRIPT_READY)
    assert not axe_violations(page), axe_violations(page)
    tab.shoot("refused")
    assert Address.objects.filter(user=me).count() == 1
    tab.console_errors[:] = [e for e in tab.console_errors if "400" not in e]  # the refused page's own status


def test_without_javascript_the_show_button_narrows_the_lists_and_the_address_saves(watched):
    me = make_user(nickname="Ann")
    tab = watched("address-no-script", java_script_enabled=False)
    sign_in(tab, me, "zh-hans")
    page = tab.go("/user/addresses")
    page.fill("input[name=recipient]", "王小明")
    page.fill("input[name=phone]", "13712345678")
    page.select_option("select[name=region]", "上海市")
    page.click("button[name=divisions_show]")
    page.wait_for_load_state()
    assert page.eval_on_selector("select[name=city]", "s => s.value") == "上海市"
    assert page.input_value("input[name=recipient]") == "王小明"  # nothing typed is lost
    page.select_option("select[name=district]", "黄浦区")
    page.fill("input[name=street]", "南京东路 1 号")
    tab.shoot("shown")
    page.click("form[aria-labelledby=add-address] button.primary")
    page.wait_for_load_state()
    saved = Address.objects.get(user=me)
    assert (saved.region, saved.city, saved.district) == ("上海市", "上海市", "黄浦区")


@pytest.mark.parametrize("language", ["en", "zh-hans"])
def test_an_address_saved_before_the_lists_is_shown_and_asked_for_its_division(watched, language):
    me = make_user(nickname="Ann")
    old = Address.objects.create(
        user=me,
        recipient="李四",
        phone="13712345678",
        region="Zhejiang",
        city="Hangzhou",
        street="1 Road",
        is_default=True,
    )
    tab = watched(f"address-old-{language}")
    sign_in(tab, me, language)
    page = tab.go("/user/addresses")
    assert "Zhejiang Hangzhou 1 Road" in page.inner_text(".addresses")
    page = tab.go(f"/user/addresses/{old.pk}")
    poll(page, SCRIPT_READY)
    assert "Zhejiang Hangzhou" in page.inner_text(".alert")
    assert not axe_violations(page), axe_violations(page)
    tab.shoot("edit")
