"""The merchant's forms in words that help: each date and time box of a sale names what it
holds, and a form sent back says what was not saved and where the messages are, on every
admin form (templates/admin/change_form.html), in English and Chinese."""

import re

import pytest

from sales.models import Sale
from testutils.factories.goods import make_goods
from testutils.factories.users import make_merchant

pytestmark = pytest.mark.django_db

SALE = {
    "seckill_price": "1",
    "start_at_0": "2030-01-01",
    "start_at_1": "10:00:00",
    "end_at_0": "2030-01-01",
    "end_at_1": "11:00:00",
}


@pytest.fixture
def merchant(client):
    merchant = make_merchant()
    client.force_login(merchant)
    return merchant


def labels(page: str, name: str) -> list[str]:
    boxes = re.findall(rf'<input[^>]*name="{name}_[01]"[^>]*>', page)
    return [re.search(r'aria-label="([^"]+)"', tag)[1] for tag in boxes]


@pytest.mark.parametrize(
    ("language", "words"),
    [
        ("en", ["Start date", "Start time", "End date", "End time"]),
        ("zh-hans", ["开始日期", "开始时间", "结束日期", "结束时间"]),
    ],
)
def test_each_date_and_time_box_of_a_sale_is_labelled(client, merchant, language, words):
    client.cookies["django_language"] = language
    page = client.get("/admin/sales/sale/add/").content.decode()
    assert labels(page, "start_at") + labels(page, "end_at") == words


@pytest.mark.parametrize(
    ("language", "beside", "below"),
    [
        ("en", "Sale not saved: see the message beside each field.", "Sale not saved: see the message below."),
        ("zh-hans", "秒杀活动未保存：请查看各字段旁的提示。", "秒杀活动未保存：请查看下方的提示。"),
    ],
)
def test_a_sale_sent_back_says_it_was_not_saved_and_where_to_look(client, merchant, language, beside, below):
    client.cookies["django_language"] = language
    goods = make_goods(owner=merchant, stock=3)
    page = client.post("/admin/sales/sale/add/", {**SALE, "goods": goods.pk, "stock_count": "many"})
    text = page.content.decode()
    assert page.status_code == 200 and beside in text and "Please correct" not in text and "请更正" not in text
    # Only the form as a whole refused (the warnings to confirm): the message is below the note.
    page = client.post("/admin/sales/sale/add/", {**SALE, "goods": goods.pk, "stock_count": 5})
    text = page.content.decode()
    assert page.status_code == 200 and below in text and "Please correct" not in text
    assert not Sale.objects.filter(goods=goods).exists()


def test_every_admin_form_says_what_was_not_saved(client, merchant):
    form = {"name_en": "", "title_en": "t", "price": "x", "stock": 1}
    page = client.post("/admin/goods/goods/add/", form).content.decode()
    assert "Goods not saved: see the message beside each field." in page and "Please correct" not in page


@pytest.mark.parametrize(
    ("language", "stock", "draw_only"),
    [("en", "Units for sale", "Draw sales only"), ("zh-hans", "可售数量", "仅抽签销售")],
)
def test_the_sale_form_names_its_stock_for_before_and_during_and_sets_the_draw_apart(
    client, merchant, language, stock, draw_only
):
    client.cookies["django_language"] = language
    page = client.get("/admin/sales/sale/add/").content.decode()
    assert re.search(rf'<label[^>]*for="id_stock_count"[^>]*>{stock}:?</label>', page), stock
    # The draw's settings in a fieldset of their own, which the page's script hides for first
    # come, first served; without the script they stay, under their heading.
    fieldset = re.search(r'<fieldset class="[^"]*draw-settings[^"]*"[^>]*>(.*?)</fieldset>', page, re.S)
    assert fieldset and draw_only in fieldset[1]
    assert 'name="draw_window_s"' in fieldset[1] and 'name="entries_open_at_0"' in fieldset[1]
    assert "js/sale-admin" in page
