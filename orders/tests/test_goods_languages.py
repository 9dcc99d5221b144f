"""An order keeps its goods' name in each language (orders.models.goods_name_snapshot): its
pages, JSON and texts read the shopper's, else the other's, whatever the goods are called now."""

import pytest
from django.utils import translation

from goods.models import Goods
from orders import notices
from orders.fulfilment import notices as news
from orders.fulfilment.services import order_ship
from orders.models import Order
from testutils.factories.goods import make_goods
from testutils.factories.orders import buy, pay
from testutils.factories.sales import make_sale
from testutils.factories.users import make_merchant, make_user
from users import sms
from users.models import User

pytestmark = pytest.mark.django_db

TEAPOT = {"name_en": "Teapot", "name_zh_hans": "茶壶", "title_en": "Clay", "title_zh_hans": "紫砂"}


def _shopper(language: str) -> User:
    user = make_user()
    User.objects.filter(pk=user.pk).update(language=language)
    user.refresh_from_db()
    return user


def _texts_to(user: User) -> list[str]:
    return [message["text"] for message in sms.outbox if message["mobile"] == user.mobile]


def test_the_order_writer_keeps_the_name_in_each_language_and_later_renames_leave_it():
    sale = make_sale(goods=make_goods(**TEAPOT))
    order = Order.objects.get(pk=buy(sale=sale, user=make_user()).pk)  # the batch writer's row
    assert (order.goods_name, order.goods_names) == ("Teapot", {"en": "Teapot", "zh-hans": "茶壶"})
    Goods.objects.filter(pk=sale.goods_id).update(name_zh_hans="新茶壶")
    order.refresh_from_db()
    with translation.override("zh-hans"):
        assert order.item_name == "茶壶"
    with translation.override("en"):
        assert order.item_name == "Teapot"


def test_an_order_written_before_the_names_per_language_reads_its_one_name():
    order = buy(sale=make_sale(), user=make_user())
    Order.objects.filter(pk=order.pk).update(goods_name="Old phone", goods_names={})
    order.refresh_from_db()
    with translation.override("zh-hans"):
        assert order.item_name == "Old phone"


@pytest.mark.parametrize(("language", "name", "other"), [("en", "Teapot", "茶壶"), ("zh-hans", "茶壶", "Teapot")])
def test_the_order_page_and_its_json_name_the_goods_in_the_shoppers_language(client, language, name, other):
    shopper = _shopper(language)
    order = buy(sale=make_sale(goods=make_goods(**TEAPOT)), user=shopper)
    client.force_login(shopper)
    client.cookies["django_language"] = language
    page = client.get(f"/orders/{order.order_no}").content.decode()
    assert name in page and other not in page
    assert name in client.get("/orders/").content.decode()
    data = client.get(f"/api/v1/orders/{order.order_no}", headers={"accept-language": language}).json()["data"]
    assert data["goodsName"] == name


def test_each_shopper_is_texted_the_goods_name_in_their_language(settings):
    settings.PAY_REMINDER_LEAD_SECONDS = 3600
    sale = make_sale(goods=make_goods(**TEAPOT))
    chinese, english = _shopper("zh-hans"), _shopper("en")
    for user in (chinese, english):
        buy(sale=sale, user=user)
    assert notices.pay_reminders_send() == 2
    [in_chinese], [in_english] = _texts_to(chinese), _texts_to(english)
    assert "茶壶" in in_chinese and "Teapot" not in in_chinese
    assert "Teapot" in in_english and "茶壶" not in in_english

    shipped = pay(Order.objects.get(user=chinese))
    order_ship(order_id=shipped.pk, carrier="sf", tracking_no="SF7", actor_id=None)
    assert news.order_news_send() == 1
    assert "茶壶" in _texts_to(chinese)[-1]


def test_the_merchants_order_search_finds_the_goods_by_its_name_in_either_language_and_theirs_alone(client):
    merchant, other = make_merchant(), make_merchant()
    phone = {"name_en": "Smart phone", "name_zh_hans": "智能手机"}
    mine = buy(sale=make_sale(goods=make_goods(owner=merchant, **phone)), user=make_user())
    teapot = buy(sale=make_sale(goods=make_goods(owner=merchant, **TEAPOT)), user=make_user())
    theirs = buy(sale=make_sale(goods=make_goods(owner=other, **phone)), user=make_user())
    client.force_login(merchant)

    def found(query: str) -> set[str]:
        page = client.get("/admin/orders/order/", {"q": query}).content.decode()
        return {order.order_no for order in (mine, teapot, theirs) if order.order_no in page}

    assert found("手机") == {mine.order_no}
    assert found("smart PHONE") == {mine.order_no}
    assert found("茶壶") == {teapot.order_no}
    # The names' language codes are keys, not text: they match no order.
    assert found("zh-hans") == set()
    client.force_login(other)
    assert found("手机") == {theirs.order_no}
