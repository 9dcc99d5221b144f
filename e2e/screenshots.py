"""`make screenshots`: every shopper page and the merchant's main admin screens, at desktop
(1280) and phone (390 x 844) width, in English and Chinese, into one contact sheet,
docs/screenshots.png (the README and docs/shop.md link it).

A pytest module run on its own (`pytest e2e/screenshots.py`; its name keeps it out of the
normal suite): it needs what the browser tests need, a live server on real PostgreSQL and
Redis, Chromium, and the data each page shows, made here. Each shot also lands in
e2e-screenshots/sheet/ at full size, for a closer look.
"""

import re
from pathlib import Path

import pytest
from PIL import Image, ImageDraw, ImageFont

from goods.models import Goods
from orders.contact.services import order_message_answer, order_message_ask
from orders.fulfilment.returns import return_request_approve, return_request_open
from orders.fulfilment.services import order_ship, refund_request_open
from sales.management.commands.seed_demo import product_image
from sales.models import StockAudit, StockChange
from testutils.browser import poll
from testutils.factories.orders import buy, pay
from testutils.factories.sales import make_ahead_sale, make_sale
from testutils.factories.users import make_merchant, make_user, session_for
from testutils.shoppers import reserve_directly
from waitingroom.models import WaitingRoom
from waitingroom.queue import place
from waitingroom.services import room_publish

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.slow]

ROOT = Path(__file__).resolve().parent.parent
SHOTS = ROOT / "e2e-screenshots" / "sheet"
SHEET = ROOT / "docs" / "screenshots.png"
VIEWPORTS = {"desktop": {"width": 1280, "height": 860}, "phone": {"width": 390, "height": 844}}
LANGUAGES = ("en", "zh-hans")
# A column's width in the sheet per viewport, and how much of a tall page it keeps.
THUMB_WIDTH = {"desktop": 420, "phone": 190}
MAX_SOURCE_HEIGHT = {"desktop": 1300, "phone": 1500}


# The goods' name and title in Chinese, as their merchant writes them beside the English.
CHINESE = {
    "Longjing tea 250 g": ("龙井茶 250 克", "明前头采，西湖产区"),
    "Redmi Note 14": ("红米 Note 14", "8GB + 256GB，5G"),
    "Electric kettle": ("电热水壶", "1.7 升，保温"),
    "Desk lamp": ("台灯", "LED 可调光"),
    "Wireless earbuds": ("无线耳机", "主动降噪，续航 30 小时"),
}


def _goods(owner, name: str, title: str, price: str, colour) -> Goods:
    chinese = CHINESE[name]
    return Goods.objects.create(
        owner=owner,
        name_en=name,
        name_zh_hans=chinese[0],
        title_en=title,
        title_zh_hans=chinese[1],
        detail_en=title,
        detail_zh_hans=chinese[1],
        price=price,
        stock=100,
        image=product_image(name, colour),
    )


def _open(browser, base_url: str, language: str, viewport: str, user=None):
    context = browser.new_context(viewport=VIEWPORTS[viewport], locale="zh-CN" if language != "en" else "en-US")
    cookies = [{"name": "django_language", "value": language, "url": base_url}]
    if user is not None:
        cookies.append({"name": "sessionid", "value": session_for(user), "url": base_url})
    context.add_cookies(cookies)
    return context, context.new_page()


def _shot(page, name: str, language: str, viewport: str) -> Path:
    SHOTS.mkdir(parents=True, exist_ok=True)
    page.wait_for_load_state("networkidle")
    page.wait_for_timeout(300)  # the first countdown tick and /user/me's greeting
    path = SHOTS / f"{name}-{language}-{viewport}.png"
    page.screenshot(path=str(path), full_page=True)
    return path


def test_contact_sheet(browser, live_server, celery_worker):
    base = live_server.url
    merchant = make_merchant(nickname="Mia")
    tea = _goods(merchant, "Longjing tea 250 g", "First flush, West Lake", "168.00", (70, 130, 60))
    phone = _goods(merchant, "Redmi Note 14", "8 GB + 256 GB, 5G", "1299.00", (40, 60, 140))
    kettle = _goods(merchant, "Electric kettle", "1.7 l, keeps warm", "199.00", (200, 80, 40))
    lamp = _goods(merchant, "Desk lamp", "Dimmable LED", "89.00", (200, 170, 40))
    on_sale = make_sale(goods=phone, stock=50, starts_in=-600, lasts=3 * 3600, seckill_price="999.00")
    upcoming = make_sale(goods=tea, stock=30, starts_in=2 * 86400 + 3 * 3600, seckill_price="99.00")
    sold_out = make_sale(goods=kettle, stock=1, starts_in=-1200, seckill_price="59.00")
    ended = make_sale(goods=lamp, stock=20, starts_in=-7200, lasts=3600, seckill_price="29.00")
    for sale in (on_sale, upcoming, sold_out, ended):  # what the merchant put up, for the claimed bars
        StockAudit.objects.create(sale=sale, delta=sale.stock_count, reason=StockChange.MERCHANT_EDIT)
    for _ in range(3):
        buy(sale=on_sale, user=make_user())
    buy(sale=sold_out, user=make_user())

    newcomer, queued, ordered, paid = (make_user(nickname=n) for n in ("Bea", "Cai", "Dan", "Eve"))
    unpaid_order = buy(sale=on_sale, user=ordered)
    paid_order = pay(buy(sale=on_sale, user=paid))
    shipped_to, asking = (make_user(nickname=n) for n in ("Fay", "Gus"))
    shipped_order = pay(buy(sale=on_sale, user=shipped_to))
    order_ship(order_id=shipped_order.pk, carrier="sf", tracking_no="SF1403 2209 8861", actor_id=merchant.pk)
    order_message_ask(order_id=shipped_order.pk, text="Please pack it with care: a gift.", actor_id=shipped_to.pk)
    order_message_answer(order_id=shipped_order.pk, text="Of course: wrapped twice, thank you!", actor_id=merchant.pk)
    returning = make_user(nickname="Hui")
    returned_order = pay(buy(sale=on_sale, user=returning))
    order_ship(order_id=returned_order.pk, carrier="zto", tracking_no="ZT7731 0045 2210", actor_id=merchant.pk)
    asked_return = return_request_open(order_id=returned_order.pk, reason="Not as described", actor_id=returning.pk)
    return_request_approve(
        order_id=returned_order.pk,
        request_id=asked_return.pk,
        return_address="Mia's shop, 88 Wensan Road, Hangzhou 310012, 0571-8888 1234",
        actor_id=merchant.pk,
    )
    asked_order = pay(buy(sale=on_sale, user=asking))
    refund_request_open(order_id=asked_order.pk, reason="I bought it by mistake", actor_id=asking.pk)
    draw_ahead = make_ahead_sale(stock=5, opens_in=-3600, starts_in=3 * 3600)
    sneakers = draw_ahead.goods
    sneakers.name_en, sneakers.title_en = "Limited sneakers", "Draw: entries open now"
    sneakers.name_zh_hans, sneakers.title_zh_hans = "限量球鞋", "抽签：现在可以报名"
    sneakers.image = product_image("Sneakers", (120, 40, 160))
    sneakers.save()
    earbuds = _goods(merchant, "Wireless earbuds", "Noise cancelling, 30 h", "499.00", (30, 30, 30))
    room_sale = make_sale(goods=earbuds, stock=100, starts_in=-60, seckill_price="199.00")
    room = WaitingRoom.objects.create(sale=room_sale, enabled=True, admit_per_minute=1, pass_minutes=10)
    room_publish(sale_id=room_sale.pk)
    for user_id in range(10**9, 10**9 + 40):  # a crowd ahead, the first of it let in already
        place(room_sale.pk, user_id)
    waiting = make_user(nickname="Ivy")
    # Last: buy() writes every reservation the sale holds, so this one would not stay queued.
    reserve_directly(queued.pk, on_sale.pk)  # the gate took it; the order is not written yet

    def captcha_open(page):
        page.click("#buy")
        poll(page, "document.getElementById('captcha-img').naturalWidth > 0")

    scenes = [
        ("Sale list", "/goods/goodsList", None, None),
        ("Item, logged out", f"/goods/detail/{on_sale.pk}", None, None),
        ("Log in (from a sale)", f"/user/index?next=/goods/detail/{on_sale.pk}", None, None),
        ("Register", "/user/register", None, None),
        ("Log in with a code", "/user/login/code", None, None),
        ("Item, starts in 2 days", f"/goods/detail/{upcoming.pk}", newcomer, None),
        ("Item, captcha", f"/goods/detail/{on_sale.pk}", newcomer, captcha_open),
        ("Item, queued", f"/goods/detail/{on_sale.pk}", queued, None),
        ("Item, ordered: pay now", f"/goods/detail/{on_sale.pk}", ordered, None),
        ("Item, paid", f"/goods/detail/{on_sale.pk}", paid, None),
        ("Item, sold out", f"/goods/detail/{sold_out.pk}", newcomer, None),
        ("Item, ended", f"/goods/detail/{ended.pk}", newcomer, None),
        ("Item, draw: entries open ahead", f"/goods/detail/{draw_ahead.pk}", newcomer, None),
        ("Order, unpaid", f"/orders/{unpaid_order.order_no}", ordered, None),
        ("Cancel: asks first", f"/orders/{unpaid_order.order_no}/cancel", ordered, None),
        ("Order, paid", f"/orders/{paid_order.order_no}", paid, None),
        ("Paid: the receipt", f"/orders/{paid_order.order_no}/paying", paid, None),
        ("My orders", "/orders/", ordered, None),
        ("Order, shipped: its story", f"/orders/{shipped_order.order_no}", shipped_to, None),
        ("My orders: on the way", "/orders/?tab=shipped", shipped_to, None),
        ("Order, refund asked", f"/orders/{asked_order.order_no}", asking, None),
        ("Order, return approved: send it back", f"/orders/{returned_order.order_no}", returning, None),
        ("Addresses", "/user/addresses", paid, None),
        ("Notifications", "/user/notifications", paid, None),
        ("Waiting room: your place", f"/waiting-room/{room_sale.pk}", waiting, None),
        ("Not found (404)", "/goods/detail/999999", None, None),
        ("Admin: home", "/admin/", merchant, None),
        ("Admin: sales", "/admin/sales/sale/", merchant, None),
        ("Admin: orders", "/admin/orders/order/", merchant, None),
        ("Admin: live view", f"/admin/orders/order/sale/{on_sale.pk}/live/", merchant, None),
        ("Admin: ship an order", f"/admin/orders/order/{paid_order.pk}/ship/", merchant, None),
        ("Admin: ship from a CSV file", "/admin/orders/order/ship.csv/", merchant, None),
        ("Admin: a refund request", f"/admin/orders/order/{asked_order.pk}/refund-request/", merchant, None),
        ("Admin: an order's messages", f"/admin/orders/order/{shipped_order.pk}/change/", merchant, None),
        ("Admin: a sale's waiting room", f"/admin/waitingroom/waitingroom/{room.pk}/change/", merchant, None),
    ]
    rows = []
    for label, path, user, action in scenes:
        row = []
        for language in LANGUAGES:
            for viewport in VIEWPORTS:
                context, page = _open(browser, base, language, viewport, user)
                response = page.goto(base + path)
                assert response is not None and response.status < 500, (label, response and response.status)
                if action:
                    action(page)
                slug = re.sub(r"[^a-z0-9]+", "-", label.lower()).strip("-")
                row.append((viewport, _shot(page, slug, language, viewport)))
                context.close()
        rows.append((label, row))
    sheet(rows).save(SHEET, optimize=True)
    assert SHEET.stat().st_size > 0


def sheet(rows: list[tuple[str, list[tuple[str, Path]]]]) -> Image.Image:
    """One row per page: English desktop, English phone, Chinese desktop, Chinese phone."""
    label_width, gap, header = 170, 14, 40
    thumbs = []
    for label, shots in rows:
        images = []
        for viewport, path in shots:
            image = Image.open(path).convert("RGB")
            image = image.crop((0, 0, image.width, min(image.height, MAX_SOURCE_HEIGHT[viewport])))
            width = THUMB_WIDTH[viewport]
            images.append(image.resize((width, round(image.height * width / image.width)), Image.Resampling.LANCZOS))
        thumbs.append((label, images))
    columns = [THUMB_WIDTH[viewport] for viewport, _ in rows[0][1]]
    width = label_width + sum(columns) + gap * (len(columns) + 1)
    height = header + sum(max(i.height for i in images) + gap for _, images in thumbs) + gap
    out = Image.new("RGB", (width, height), (236, 238, 242))
    draw = ImageDraw.Draw(out)
    font = _font(17)
    x = label_width + gap
    for title, column in zip(("English, 1280", "phone 390", "中文, 1280", "手机 390"), columns, strict=True):
        draw.text((x, 10), title, fill=(31, 35, 40), font=font)
        x += column + gap
    y = header
    for label, images in thumbs:
        draw.multiline_text((10, y + 4), _wrap(label, 16), fill=(31, 35, 40), font=font, spacing=4)
        x = label_width + gap
        for image, column in zip(images, columns, strict=True):
            out.paste(image, (x, y))
            x += column + gap
        y += max(i.height for i in images) + gap
    return out


def _wrap(text: str, width: int) -> str:
    lines, line = [], ""
    for word in text.split():
        if line and len(line) + 1 + len(word) > width:
            lines.append(line)
            line = word
        else:
            line = f"{line} {word}".strip()
    return "\n".join([*lines, line])


def _font(size: int):
    for path in (
        "/usr/share/fonts/opentype/noto/NotoSansCJK-Regular.ttc",
        "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf",
    ):
        if Path(path).exists():
            return ImageFont.truetype(path, size)
    return ImageFont.load_default(size=size)
