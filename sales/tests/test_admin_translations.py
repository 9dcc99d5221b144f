"""Every admin screen a merchant uses, rendered in zh-Hans: no English may be left on it.

The shop's data here is all Chinese (names, goods, addresses), so any run of Latin letters on
a page is a piece of the interface nobody translated: a verbose name ("库存变动s"), a column
header, a filter, a status ("on sale"), a live-view label ("Captchas refused"), a message.
Text nodes and the attributes people read or hear (title, placeholder, aria-label, alt, a
button's value) are checked; scripts, styles and URLs are not, except the live view's
words, which its script writes into the page.
"""

import json
import re
from html.parser import HTMLParser

import pytest
from django.utils import timezone

from sales.models import Sale
from testutils.factories.users import PASSWORD
from testutils.merchant_screens import MERCHANT_SCREENS
from users.models import User

pytestmark = pytest.mark.django_db

# Latin words that are no interface text: the language menu's own name for English, the
# time zone's name, and abbreviations, file formats and brands (China Post's EMS) Chinese writes as
# they are.
ALLOWED = {"English", "Asia", "Shanghai", "UTC", "CSV", "IP", "ID", "PNG", "JPEG", "MB", "EMS"}
LATIN_WORD = re.compile(r"[A-Za-z][A-Za-z'’]*")
READ_ATTRIBUTES = {"title", "placeholder", "aria-label", "alt"}


class VisibleText(HTMLParser):
    """Text a person reads or hears on the page: text nodes outside script and style, the
    attributes above, and the labels of input buttons. <bdi> holds data (Django isolates a
    password hash's algorithm and salt in it), not interface text."""

    def __init__(self) -> None:
        super().__init__()
        self.texts: list[str] = []
        self.json_scripts: list[str] = []
        self._skip = 0
        self._json = False

    def handle_starttag(self, tag, attrs):
        attributes = dict(attrs)
        if tag in ("script", "style", "bdi"):
            self._skip += 1
            self._json = tag == "script" and attributes.get("type") == "application/json"
        for name in READ_ATTRIBUTES & set(attributes):
            self.texts.append(attributes[name] or "")
        if tag == "input" and attributes.get("type") in ("submit", "button", "reset"):
            self.texts.append(attributes.get("value") or "")

    def handle_endtag(self, tag):
        if tag in ("script", "style", "bdi"):
            self._skip -= 1
            self._json = False

    def handle_data(self, data):
        if self._json:
            self.json_scripts.append(data)
        elif not self._skip:
            self.texts.append(data)


def english_left(html: str, allowed: set[str] = ALLOWED) -> list[str]:
    parser = VisibleText()
    parser.feed(html)
    texts = list(parser.texts)
    for blob in parser.json_scripts:  # words a script puts on the page (the live view)
        texts += _strings(json.loads(blob))
    found = []
    for text in texts:
        words = [w for w in LATIN_WORD.findall(text) if w not in allowed]
        if words:
            found.append(" ".join(text.split())[:120])
    return found


def _strings(value) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for item in value.values() for s in _strings(item)]
    if isinstance(value, list):
        return [s for item in value for s in _strings(item)]
    return []


def _sale_form(sale: Sale, **changes) -> dict:
    start, end = timezone.localtime(sale.start_at), timezone.localtime(sale.end_at)
    data = {
        "goods": sale.goods_id,
        "seckill_price": str(sale.seckill_price),
        "stock_count": sale.stock_count,
        "initial-stock_count": sale.stock_count,
        "start_at_0": start.strftime("%Y-%m-%d"),
        "start_at_1": start.strftime("%H:%M:%S"),
        "end_at_0": end.strftime("%Y-%m-%d"),
        "end_at_1": end.strftime("%H:%M:%S"),
    }
    return {**data, **changes}


def _fill(value, ids):
    if isinstance(value, list):
        return [_fill(item, ids) for item in value]
    return value.format(**ids) if isinstance(value, str) else value


@pytest.fixture
def chinese_merchant(client, shop):
    client.force_login(shop["merchant"])
    client.cookies["django_language"] = "zh-hans"
    return client


def test_every_merchant_admin_screen_is_in_chinese(chinese_merchant, shop):
    ids = {name: getattr(obj, "pk", None) for name, obj in shop.items()}
    untranslated = {}
    for method, url, *data in MERCHANT_SCREENS:
        url = url.format(**ids)
        if method == "get":
            response = chinese_merchant.get(url)
        else:
            form = {key: _fill(value, ids) for key, value in data[0].items()}
            if url.endswith(("/change/", "/add/")):
                form = {**_sale_form(shop["sale"]), **form}
            response = chinese_merchant.post(url, form)
        assert response.status_code == 200, (url, response.status_code)
        left = english_left(response.content.decode())
        if left:
            untranslated[f"{method.upper()} {url}"] = left
    assert not untranslated, json.dumps(untranslated, ensure_ascii=False, indent=1)


def test_the_warnings_and_their_box_are_on_the_page_checked_above(chinese_merchant, shop):
    """The POSTs above render the warnings (not a saved sale), so their words were checked."""
    url = f"/admin/sales/sale/{shop['sale'].pk}/change/"
    page = chinese_merchant.post(url, _sale_form(shop["sale"], seckill_price="5.00", stock_count=40)).content.decode()
    assert 'name="confirm"' in page and 'type="checkbox"' in page
    assert "¥9.90" in page and "龙井茶" in page  # the price warning and the stock warning


def test_superuser_screens_are_in_chinese(client, shop):
    admin = User.objects.create_superuser("13800000009", PASSWORD, nickname="管理员")
    client.force_login(admin)
    client.cookies["django_language"] = "zh-hans"
    buyer = shop["paid"].user
    untranslated = {}
    for url in [
        "/admin/",
        "/admin/users/user/",
        f"/admin/users/user/{buyer.pk}/change/",
        "/admin/users/user/add/",
        "/admin/auth/group/",
        "/admin/goods/goods/",
        "/admin/orders/order/",
        "/admin/waitingroom/shopswitches/",
        "/admin/waitingroom/waitingroomaction/",
    ]:
        response = client.get(url)
        assert response.status_code == 200, url
        # The Merchants group's name is a row (goods.admin looks the group up by it), not
        # interface text; Django's help for multiple choices names keys as they are labelled.
        if left := english_left(response.content.decode(), ALLOWED | {"Merchants", "Control", "Mac", "Command"}):
            untranslated[url] = left
    assert not untranslated, json.dumps(untranslated, ensure_ascii=False, indent=1)


def test_the_login_page_is_in_chinese(client):
    client.cookies["django_language"] = "zh-hans"
    assert english_left(client.get("/admin/login/").content.decode()) == []


def test_the_check_finds_english():
    """The detector itself: English in a text node, an attribute or a script's words is found."""
    assert english_left("<p>库存变动s</p>") == ["库存变动s"]
    assert english_left('<a title="Live view">实时</a>') == ["Live view"]
    assert english_left('<script type="application/json" id="w">{"a": ["on sale"]}</script>') == ["on sale"]
    assert english_left("<script>var English = 1;</script><p>Asia/Shanghai UTC+08:00</p>") == []
