"""zh-Hans is complete for shoppers, and stays so (issue 24):

- every shopper page, in every state it shows, rendered in zh-Hans with the Django test
  client, has no English word in its text or in the attributes people hear or read (alt,
  title, aria-label, placeholder, the buttons' data strings), and neither does the text
  message itself;
- `makemessages` run on the tree finds no string without a translation and none fuzzy, in
  either catalogue (django and djangojs), so a new string cannot land untranslated.
"""

import re
import shutil
import subprocess
from datetime import timedelta
from html.parser import HTMLParser
from pathlib import Path

import pytest
from django.core.management import call_command
from django.utils import timezone

from sales import sale_state
from sales.models import Sale, SaleDraw
from sales.sale_state import keys
from sales.services import draw_seed_ensure, sale_open
from seckill.services.draw import sale_draw
from seckill_site.redis import client as redis
from testutils.factories.goods import make_goods
from testutils.factories.orders import buy, pay
from testutils.factories.sales import make_sale
from testutils.factories.users import make_user
from testutils.shoppers import reserve_directly
from tools.missing import missing
from users import sms

ROOT = Path(__file__).resolve().parents[2]
ZH = {"HTTP_ACCEPT_LANGUAGE": "zh-hans"}
# Words that are right in Chinese too: the zone's name and offset, the other language's own
# name in the language menu, and the test data's Latin-free names.
ALLOWED = {"UTC", "Asia", "Shanghai", "English", "SHA"}
READ_ATTRIBUTES = {"alt", "title", "aria-label", "placeholder", "data-resend", "data-sent", "data-picture-label"}
# "Remind me" on the item page (templates/seckill/remind.html): what its button and status say.
READ_ATTRIBUTES |= {"data-label-off", "data-label-on", "data-said-off", "data-said-failed"}
READ_ATTRIBUTES |= {"data-title-start", "data-title-back", "data-text-start", "data-text-back"}
READ_ATTRIBUTES |= {"data-said-on-start", "data-said-on-back"}


class _Text(HTMLParser):
    """The text a person reads or hears: text nodes outside script and style, and the
    attributes that are shown or spoken."""

    def __init__(self) -> None:
        super().__init__()
        self.parts: list[str] = []
        self._skip = 0

    def handle_starttag(self, tag, attrs):
        # <code translate="no">: a value, not words (a draw's seed and its hash, a file name).
        # The page offered in another language says so in that language (includes/language_offer.html).
        offer = tag == "aside" and any(name == "data-language-offer" for name, _value in attrs)
        if tag in ("script", "style") or (tag == "code" and ("translate", "no") in attrs) or offer:
            self._skip += 1
        if offer:
            return
        for name, value in attrs:
            if value and (
                name in READ_ATTRIBUTES or (tag == "input" and name == "value" and ("type", "submit") in attrs)
            ):
                self.parts.append(value)

    def handle_endtag(self, tag):
        if tag in ("script", "style", "code", "aside") and self._skip:
            self._skip -= 1

    def handle_data(self, data):
        if not self._skip:
            self.parts.append(data)


def english_words(html: str) -> list[str]:
    parser = _Text()
    parser.feed(html)
    text = " ".join(parser.parts)
    return sorted({word for word in re.findall(r"[A-Za-z]{2,}", text) if word not in ALLOWED})


@pytest.mark.django_db
def test_every_shopper_page_is_chinese_in_zh_hans(client, settings):
    settings.SMS_BACKEND = "users.sms.LocmemSmsBackend"
    goods = make_goods(name="龙井茶", title="明前头采", detail="西湖产区")
    on_sale = make_sale(goods=goods, stock=5)
    upcoming = make_sale(goods=goods, starts_in=3 * 86400)
    sold_out = make_sale(goods=goods, stock=0)
    ended = make_sale(goods=goods, starts_in=-7200, lasts=3600)
    buyer, payer, waiter, loser, newcomer = (make_user(nickname="小王") for _ in range(5))
    unpaid = buy(sale=on_sale, user=buyer)
    paid = pay(buy(sale=on_sale, user=payer))
    reserve_directly(waiter.pk, on_sale.pk)
    redis().set(keys.result(on_sale.pk, loser.pk), -1)
    # A draw sale (docs/draw.md): before it opens, one entrant in its window, one not drawn.
    draw_upcoming = make_sale(goods=goods, starts_in=3 * 86400, admission="draw", warm=False)
    draw_open = make_sale(goods=goods, starts_in=-1, admission="draw", draw_window_s=120, warm=False)
    draw_made = make_sale(goods=goods, stock=1, starts_in=-1, admission="draw", draw_window_s=120, warm=False)
    for sale in (draw_upcoming, draw_open, draw_made):
        draw_seed_ensure(sale=sale)
        sale_open(sale_id=sale.pk)
    entrant, unlucky, lucky = (make_user(nickname="小李") for _ in range(3))
    for user, sale in ((entrant, draw_open), (unlucky, draw_made), (lucky, draw_made)):
        sale_state.path_set(sale_id=sale.pk, user_id=user.pk, path="p")
        assert sale_state.enter(sale_id=sale.pk, user_id=user.pk, path="p").refusal is None
    start = timezone.now() - timedelta(seconds=130)
    Sale.objects.filter(pk=draw_made.pk).update(start_at=start)
    draw_made.refresh_from_db()
    sale_state.window_set(
        sale_id=draw_made.pk,
        start=start.timestamp(),
        end=draw_made.end_at.timestamp(),
        draw=draw_made.draw_at.timestamp(),
    )
    assert sale_draw(sale_id=draw_made.pk).state == "drawn"
    unlucky = unlucky if lucky.pk in SaleDraw.objects.get(sale=draw_made).winner_ids else lucky

    pages = {
        "list": (None, "get", "/goods/goodsList", {}),
        "item, logged out": (None, "get", f"/goods/detail/{on_sale.pk}", {}),
        "login": (None, "get", f"/user/index?next=/goods/detail/{on_sale.pk}", {}),
        "login, wrong password": (None, "post", "/user/login", {"mobile": buyer.mobile, "password": "wrong-one"}),
        "login, empty": (None, "post", "/user/login", {}),
        "register": (None, "get", "/user/register", {}),
        "register, errors": (None, "post", "/user/register", {"mobile": "12", "password": "a", "password_again": "b"}),
        "login by code": (None, "get", "/user/login/code", {}),
        "login by code, errors": (None, "post", "/user/login/code", {"mobile": "1"}),
        "404": (None, "get", "/goods/detail/999999", {}),
        "item, not started": (newcomer, "get", f"/goods/detail/{upcoming.pk}", {}),
        "item, on sale": (newcomer, "get", f"/goods/detail/{on_sale.pk}", {}),
        "item, sold out": (newcomer, "get", f"/goods/detail/{sold_out.pk}", {}),
        "item, ended": (newcomer, "get", f"/goods/detail/{ended.pk}", {}),
        "item, queued": (waiter, "get", f"/goods/detail/{on_sale.pk}", {}),
        "item, ordered": (buyer, "get", f"/goods/detail/{on_sale.pk}", {}),
        "item, paid": (payer, "get", f"/goods/detail/{on_sale.pk}", {}),
        "item, failed": (loser, "get", f"/goods/detail/{on_sale.pk}", {}),
        "item, draw not started": (newcomer, "get", f"/goods/detail/{draw_upcoming.pk}", {}),
        "item, entered in the draw": (entrant, "get", f"/goods/detail/{draw_open.pk}", {}),
        "item, not drawn": (unlucky, "get", f"/goods/detail/{draw_made.pk}", {}),
        "my orders": (buyer, "get", "/orders/", {}),
        "order, unpaid": (buyer, "get", f"/orders/{unpaid.order_no}", {}),
        "cancel, asks first": (buyer, "get", f"/orders/{unpaid.order_no}/cancel", {}),
        "order, paid": (payer, "get", f"/orders/{paid.order_no}", {}),
        "notification settings": (buyer, "get", "/user/notifications", {}),
    }
    untranslated = {}
    for name, (user, method, path, data) in pages.items():
        client.logout()
        if user is not None:
            client.force_login(user)
        # The shared pages' address names their language; the others follow the visitor's.
        shared = "/zh-hans" + path if path.startswith("/goods/") else path
        response = getattr(client, method)(shared, data, **ZH)
        assert response.status_code < 500, (name, response.status_code)
        found = english_words(response.content.decode())
        if found:
            untranslated[name] = found

    # The text-message flow: the answers the page shows, and the message itself.
    client.logout()
    sent = client.post("/user/sms/send", {"mobile": "13712340000", "purpose": "register"}, **ZH)
    again = client.post("/user/sms/send", {"mobile": "13712340000", "purpose": "register"}, **ZH)
    refused = client.post("/user/sms/send", {"mobile": "", "purpose": "register"}, **ZH)
    assert sent.json()["code"] == 0 and again.status_code == 429
    for name, text in [
        ("text message", sms.outbox[-1]["text"]),
        ("resend refused", again.json()["msg"]),
        ("no number", refused.json()["msg"]),
    ]:
        found = english_words(text)
        if found:
            untranslated[name] = found
    assert untranslated == {}


def test_english_words_are_found():
    """The checker itself: English text and read-aloud attributes count, markup does not."""
    assert english_words('<p class="x">你好 Buy now</p><img alt="A phone"><script>var a = "b";</script>') == [
        "Buy",
        "now",
        "phone",
    ]
    assert english_words('<p title="Asia/Shanghai">UTC+08:00 开始</p>') == []


@pytest.mark.skipif(
    not shutil.which("xgettext") or not shutil.which("msgattrib"),
    reason=missing("GNU gettext is not installed", "gettext"),
)
def test_makemessages_leaves_no_empty_or_fuzzy_entry(tmp_path, monkeypatch, settings):
    """makemessages on a copy of the tree (it writes into the catalogues it finds), then GNU
    gettext's msgattrib lists what is untranslated or fuzzy: nothing may be."""
    tree = tmp_path / "tree"
    ignore = shutil.ignore_patterns(".*", "staticfiles", "media", "e2e-screenshots", "bench-results", "__pycache__")
    apps = ("users", "goods", "sales", "orders", "seckill", "waitingroom", "seckill_site")
    for name in (*apps, "templates", "static", "locale", "tools"):
        shutil.copytree(ROOT / name, tree / name, ignore=ignore)
    monkeypatch.chdir(tree)
    settings.LOCALE_PATHS = [str(tree / "locale")]
    for domain in ("django", "djangojs"):
        call_command("makemessages", locale=["zh_Hans"], domain=domain, verbosity=0)
    problems = {}
    for domain in ("django", "djangojs"):
        po = tree / "locale" / "zh_Hans" / "LC_MESSAGES" / f"{domain}.po"
        for kind in ("--untranslated", "--only-fuzzy"):
            listed = subprocess.run(
                ["msgattrib", kind, "--no-obsolete", "--no-wrap", str(po)], capture_output=True, text=True, check=True
            ).stdout
            entries = [m for m in re.findall(r'^msgid "(.*)"$', listed, re.MULTILINE) if m]
            if entries:
                problems[f"{domain} {kind}"] = entries
    assert problems == {}
