"""The shop through a real browser, against a live server on real PostgreSQL, Redis and a
Celery worker. Every page visited is screenshotted at desktop and phone widths into
e2e-screenshots/; console errors and 5xx answers fail the test."""

import json
import re
from datetime import timedelta
from pathlib import Path

import pytest
from django.conf import settings
from django.utils import timezone

from goods.models import Goods
from orders.models import Order
from orders.payments.closing import orders_expire_unpaid
from sales.models import Sale
from sales.sale_state import keys
from sales.services import sale_update
from seckill_site.redis import client
from testutils.browser import choose_chinese, log_in, poll, provider_word_awaited
from testutils.factories.goods import make_goods
from testutils.factories.orders import buy
from testutils.factories.sales import make_sale
from testutils.factories.users import PASSWORD, make_address, make_merchant, make_user
from users.models import User

COUNTDOWN_S = 8  # from the item page's first showing to the sale's start

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.slow]


def admin_log_in(tab, mobile: str) -> None:
    tab.go("/admin/login/")
    tab.page.fill("input[name=username]", mobile)
    tab.page.fill("input[name=password]", PASSWORD)
    tab.page.click("input[type=submit]")
    tab.page.wait_for_selector("#site-name")


def test_shopper_watches_the_countdown_buys_pays_and_finds_the_order(watched, celery_worker):
    sale = make_sale(goods=make_goods(name="Browser Phone"), stock=3, starts_in=3600)
    shopper = make_user(nickname="Bea")
    make_address(shopper)  # where the order ships (chosen on the order page)
    tab = watched("shopper")
    page = tab.page
    log_in(page, tab.base_url, shopper.mobile)
    page.wait_for_selector("text=Hi, Bea")
    assert page.locator("text=Browser Phone").count() == 1
    tab.shoot("list")

    # The countdown's last seconds start now: a start fixed before logging in had passed by the
    # time a loaded machine showed the item page, and the button was already on.
    sale_update(sale=sale, changes={"start_at": timezone.now() + timedelta(seconds=COUNTDOWN_S)})
    tab.go(f"/goods/detail/{sale.pk}")
    assert page.is_disabled("#buy")
    assert "Starts in" in page.inner_text("#countdown")
    tab.shoot("countdown")
    page.wait_for_selector("#buy:not([disabled])", timeout=(COUNTDOWN_S + 10) * 1000)  # the countdown turns it on

    page.click("#buy")
    page.wait_for_selector("#captcha-img")
    # The picture is fetched, then shown: an <img> without one yet is "complete" too. Polled
    # from here: wait_for_function evaluates its predicate with eval() inside the page, which
    # the Content-Security-Policy refuses (and the test would report as a violation).
    poll(page, "document.getElementById('captcha-img').naturalWidth > 0")
    answer = client().get(keys.captcha(sale.pk, shopper.pk)).decode()
    tab.shoot("captcha")
    page.fill("#captcha-answer", answer)
    page.click("#captcha-form button[type=submit]")
    page.wait_for_selector("#pay-now", timeout=15_000)  # queued, then the order
    assert "Your order is placed" in page.inner_text("#result")
    tab.shoot("ordered")

    page.click("#pay-now")
    page.wait_for_url(re.compile(r".*/orders/\d+$"))
    tab.shoot("order-unpaid")
    assert page.is_checked("input[name=method][value=alipay]")  # the first way to pay
    page.click("text=Pay ¥1.00")
    page.wait_for_selector("#pay")  # Alipay's cashier (the stand-in), on its own site
    assert page.url.startswith(settings.ALIPAY_GATEWAY.rsplit("/gateway.do", 1)[0] + "/")
    tab.shoot("alipay-cashier")
    page.click("#pay")
    page.wait_for_url(re.compile(r".*/orders/\d+/paying(\?.*)?$"))  # Alipay's return_url
    # Paid once Alipay's notification reaches the shop; the page polls, then shows it.
    provider_word_awaited(page, "Payment received")
    tab.shoot("paying-paid")
    assert Order.objects.get(user=shopper).status == "paid"
    tab.go(f"/orders/{Order.objects.get(user=shopper).order_no}")
    assert page.locator(".pill.paid").count() == 1
    tab.shoot("order-paid")

    tab.go("/orders/")
    assert page.locator(".pill.paid").count() == 1
    tab.shoot("my-orders")


# Every #result text the page shows, in order, from here on (asked through the debugging
# protocol, so the page's Content-Security-Policy does not apply).
RECORD_RESULT = """() => {
  window.__said = [];
  new MutationObserver(function () { window.__said.push(document.getElementById("result").textContent); })
    .observe(document.getElementById("result"), { childList: true, characterData: true, subtree: true });
}"""


@pytest.mark.parametrize(
    ("language", "placed", "queued"),
    [("en", "Your order is placed", "in the queue"), ("zh-hans", "订单已生成", "排队中")],
    ids=["en", "zh"],
)
def test_an_order_written_before_the_buys_answer_arrives_is_said_placed_once(
    watched, celery_worker, language, placed, queued
):
    """doSeckill's answer reaches the page after the order is written (a slow network): the
    shopper's state, which the page asks before it says "in the queue", finds the order, and
    the page says it is placed, once, never "in the queue"."""
    sale = make_sale(goods=make_goods(name="Quick Kettle"), stock=2)
    shopper = make_user()
    tab = watched(f"order-first-{language}")
    page = tab.page
    if language == "zh-hans":
        choose_chinese(tab)
    log_in(page, tab.base_url, shopper.mobile)
    tab.go(f"/goods/detail/{sale.pk}")
    page.evaluate(RECORD_RESULT)
    answers = []  # doSeckill's request, held here: it reaches the shop only when fetched
    page.route("**/doSeckill", lambda route: answers.append(route))

    page.click("#buy")
    poll(page, "document.getElementById('captcha-img').naturalWidth > 0")
    page.fill("#captcha-answer", client().get(keys.captcha(sale.pk, shopper.pk)).decode())
    page.click("#captcha-form button[type=submit]")
    for _ in range(200):
        if answers:
            break
        page.wait_for_timeout(50)
    buy_request = answers[0]
    answer = buy_request.fetch()  # the shop takes the buy; the page has no answer yet
    assert answer.json()["code"] == 0
    for _ in range(300):  # the worker writes the order
        if Order.objects.filter(user=shopper, sale=sale).exists():
            break
        page.wait_for_timeout(50)
    assert Order.objects.filter(user=shopper, sale=sale).count() == 1

    with page.expect_response("**/doSeckill"):
        buy_request.fulfill(response=answer)
    page.wait_for_selector("#pay-now", timeout=15_000)
    page.wait_for_timeout(500)  # the answer's handler and the state it asks
    said = page.evaluate("window.__said")
    assert placed in said[-1]
    assert not [text for text in said if queued in text], said
    assert page.locator("#pay-now").count() == 1
    tab.shoot("order-first")


def test_an_unpaid_order_expires_and_its_stock_reappears(watched):
    sale = make_sale(goods=make_goods(name="Expiring Lamp"), stock=1)
    shopper = make_user()
    order = buy(sale=sale, user=shopper)
    tab = watched("expiry")
    page = tab.page
    log_in(page, tab.base_url, shopper.mobile)
    tab.go(f"/goods/detail/{sale.pk}")
    assert page.inner_text("#stock") == "0"
    tab.go(f"/orders/{order.order_no}")
    assert page.locator(".pill.unpaid").count() == 1
    tab.shoot("unpaid")

    Order.objects.filter(pk=order.pk).update(pay_deadline=timezone.now() + timedelta(seconds=2))
    page.reload()
    page.wait_for_timeout(2500)
    assert orders_expire_unpaid() == 1  # what Celery beat runs every SECKILL_EXPIRE_SWEEP_SECONDS
    page.wait_for_selector(".pill.cancelled", timeout=10_000)  # the page reloads itself at zero
    tab.shoot("expired")
    tab.go(f"/goods/detail/{sale.pk}")
    assert page.inner_text("#stock") == "1"
    assert page.is_enabled("#buy")
    tab.shoot("stock-back")


def test_merchant_creates_a_sale_watches_it_sell_and_another_merchant_cannot_see_it(watched, tmp_path):
    from sales.management.commands.seed_demo import product_image

    merchant, rival = make_merchant(nickname="Mia"), make_merchant(nickname="Rex")
    make_goods(owner=rival, name="Rival Kettle")
    image = Path(tmp_path / "toaster.png")
    image.write_bytes(product_image("Toaster", (200, 80, 40)).read())

    tab = watched("merchant")
    page = tab.page
    admin_log_in(tab, merchant.mobile)
    tab.shoot("admin-home")

    tab.go("/admin/goods/goods/add/")
    page.fill("input[name=name_en]", "Toaster")
    page.fill("input[name=name_zh_hans]", "烤面包机")
    page.fill("input[name=title_en]", "Two slots, six levels")
    page.fill("input[name=price]", "199")
    page.fill("input[name=stock]", "10")
    page.set_input_files("input[name=image]", str(image))
    page.click("input[name=_save]")
    page.wait_for_selector("text=was added successfully")
    assert page.locator("text=Rival Kettle").count() == 0
    tab.shoot("goods-list")

    tab.go("/admin/sales/sale/add/")
    page.select_option("select[name=goods]", label="Toaster")
    page.fill("input[name=seckill_price]", "9.90")
    page.fill("input[name=stock_count]", "4")
    now, later = timezone.localtime() - timedelta(minutes=1), timezone.localtime() + timedelta(hours=1)
    page.fill("input[name=start_at_0]", now.strftime("%Y-%m-%d"))
    page.fill("input[name=start_at_1]", now.strftime("%H:%M:%S"))
    page.fill("input[name=end_at_0]", later.strftime("%Y-%m-%d"))
    page.fill("input[name=end_at_1]", later.strftime("%H:%M:%S"))
    page.click("input[name=_save]")
    page.wait_for_selector("text=was added successfully")
    sale = Sale.objects.get(goods__name="Toaster")
    assert client().get(keys.stock(sale.pk)) == b"4"  # pre-heated on save

    tab.go("/goods/goodsList")
    assert page.locator("text=Toaster").count() == 1
    assert Goods.objects.get(name="Toaster").image

    for user in (make_user(), make_user()):
        buy(sale=sale, user=user)
    tab.go("/admin/sales/sale/")
    row = page.locator("tr", has_text="Toaster")
    cells = row.locator("td").all_inner_texts()
    assert "2" in cells and "4" not in cells[:3], cells  # 2 left and two unpaid orders
    tab.shoot("live-figures")
    page.click("tr:has-text('Toaster') >> text=Live view")
    page.wait_for_selector("#chart rect")  # bars drawn from the figures
    assert page.inner_text("#stock-left") == "2" and page.inner_text("#unpaid") == "2"
    tab.shoot("live-view")

    rival_tab = watched("rival")
    rival_page = rival_tab.page
    admin_log_in(rival_tab, rival.mobile)
    rival_tab.go("/admin/sales/sale/")
    assert rival_page.locator("text=Toaster").count() == 0
    response = rival_page.goto(f"{rival_tab.base_url}/admin/sales/sale/{sale.pk}/change/")
    assert "Toaster" not in rival_page.content() and response.status in (200, 302, 404)


def test_the_shop_in_chinese(watched):
    sale = make_sale(goods=make_goods(name="茶叶"), stock=2, starts_in=3600)
    shopper = make_user(nickname="小王")
    tab = watched("chinese")
    page = tab.page
    choose_chinese(tab)
    tab.shoot("list")
    log_in(page, tab.base_url, shopper.mobile)
    page.wait_for_selector("text=你好，小王")
    tab.go(f"/goods/detail/{sale.pk}")
    page.wait_for_selector("text=距开始")
    assert page.inner_text("#buy") == "立即秒杀"
    tab.shoot("detail")


def test_a_new_shopper_registers_with_the_code_texted_to_their_phone(watched, settings, tmp_path):
    """The development file backend stands in for the phone: the page asks for a code, the
    shopper reads it where the demo says (one JSON line per message) and registers with it."""
    settings.SMS_BACKEND = "users.sms.FileSmsBackend"
    settings.SMS_FILE_PATH = str(tmp_path / "sms.jsonl")
    tab = watched("register")
    page = tab.page
    tab.go("/user/register")
    page.fill("input[name=mobile]", "13712340000")
    page.click("#sms-send")
    # The button is disabled as the request leaves, and counts down once the answer is in.
    page.wait_for_selector("#sms-send[disabled]:has-text('Send again in')")  # the resend countdown runs
    tab.shoot("code-sent")
    message = json.loads((tmp_path / "sms.jsonl").read_text().splitlines()[-1])
    assert message["mobile"] == "13712340000"
    code = re.search(r"\b(\d{6})\b", message["text"])[1]

    page.fill("input[name=nickname]", "Newt")
    page.fill("input[name=password]", "brand-new-pass-1")
    page.fill("input[name=password_again]", "brand-new-pass-1")
    page.fill("input[name=code]", code)
    page.click("form[action$='/user/register'] button[type=submit]")
    page.wait_for_url("**/goods/goodsList")
    page.wait_for_selector("text=Hi, Newt")
    tab.shoot("registered")
    assert User.objects.filter(mobile="13712340000", nickname="Newt").exists()


def test_the_api_docs_and_the_login_by_code_page_keep_to_the_content_security_policy(watched):
    """The pages no other flow visits, under the same policy: the API's Swagger UI
    (drf-spectacular's template, with the nonce on its inline start-up code) and login by code."""
    tab = watched("docs")
    page = tab.page
    tab.go("/api/docs/")
    page.wait_for_selector("#swagger-ui .opblock-summary-path", timeout=20_000)  # the operations are drawn
    tab.go("/user/login/code")
    page.wait_for_selector("#sms-send")


def test_the_browser_tests_see_a_content_security_policy_violation(browser, live_server):
    """The listener behind every page check works: an inline script a page did not sign is
    blocked and reported."""
    from testutils.browser import Watched

    tab = Watched(browser, live_server.url, "csp-control")
    tab.go("/user/index")
    tab.page.evaluate("""() => { const s = document.createElement("script");
                                 s.textContent = "window.__ran = true"; document.body.appendChild(s); }""")
    poll(tab.page, "window.__ran === undefined")
    tab.page.wait_for_timeout(300)
    assert tab.page.evaluate("window.__ran === undefined")  # blocked
    assert any(v.startswith("script-src") for v in tab.csp_violations), tab.csp_violations
    tab.context.close()
