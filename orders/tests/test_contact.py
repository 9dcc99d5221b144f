"""Contact the merchant: an order's thread. The shopper writes from the order page (plain text,
at most 500 characters, rate-limited), the merchant sees the orders with a message to answer,
their own only, and answers on the order's admin page; the shopper is texted once, in their
language, and reads the thread on the order page. Bad input is a 4xx that changes nothing;
another shopper's or merchant's order is a 404."""

from html.parser import HTMLParser

import pytest

from orders.contact import notices
from orders.contact.services import UNANSWERED_MAX, MessageRefused, order_message_answer, order_message_ask
from orders.models import MessageInvalid, OrderMessage, message_text_clean
from testutils.factories.goods import make_goods
from testutils.factories.orders import buy, pay
from testutils.factories.sales import make_sale
from testutils.factories.users import make_merchant, make_user
from testutils.pages import written_at
from users import sms
from users.models import Notice, NoticeSettings

pytestmark = pytest.mark.django_db

JSON = {"HTTP_ACCEPT": "application/json"}


def _paid(shopper=None, merchant=None):
    goods = make_goods(owner=merchant or make_merchant())
    return pay(buy(sale=make_sale(goods=goods), user=shopper or make_user()))


def texts_to(mobile: str) -> list[str]:
    return [message["text"] for message in sms.outbox if message["mobile"] == mobile]


@pytest.fixture
def me(client):
    user = make_user()
    client.force_login(user)
    return user


# --- what a message may be --------------------------------------------------------------------


def test_a_message_keeps_its_lines_but_not_its_excess_blank_lines_or_trailing_spaces():
    assert message_text_clean("  Hello  \r\n\r\n\r\n\r\nIs it red?\t \n") == "Hello\n\nIs it red?"


@pytest.mark.parametrize(
    "text",
    ["", "   \n\t ", "x" * 501, "null \x00 byte", "bell \x07", "spoof \u202e txt.exe", "isolate \u2066 x"],
    ids=["empty", "blank", "too-long", "nul", "control", "bidi-override", "bidi-isolate"],
)
def test_a_text_the_thread_cannot_keep_is_refused(text):
    with pytest.raises(MessageInvalid):
        message_text_clean(text)


def test_emoji_and_chinese_are_plain_text():
    assert message_text_clean("有红色的吗？👨‍👩‍👧") == "有红色的吗？👨‍👩‍👧"


# --- the rules ------------------------------------------------------------------------------


def test_only_a_paid_order_has_a_thread():
    unpaid = buy(sale=make_sale(), user=make_user())
    with pytest.raises(MessageRefused):
        order_message_ask(order_id=unpaid.pk, text="Hi", actor_id=unpaid.user_id)
    assert not OrderMessage.objects.exists()


def test_a_shopper_may_leave_only_so_many_messages_unanswered():
    order = _paid()
    for n in range(UNANSWERED_MAX):
        order_message_ask(order_id=order.pk, text=f"Hello {n}", actor_id=order.user_id)
    with pytest.raises(MessageRefused):
        order_message_ask(order_id=order.pk, text="Hello again", actor_id=order.user_id)
    order_message_answer(order_id=order.pk, text="Hi, it ships today", actor_id=None)
    assert not OrderMessage.objects.filter(order=order, from_merchant=False, answered_at__isnull=True).exists()
    order_message_ask(order_id=order.pk, text="Thanks", actor_id=order.user_id)


# --- the shopper's page ---------------------------------------------------------------------


def test_the_shopper_writes_from_the_order_page_and_reads_it_escaped(client, me):
    order = _paid(shopper=me)
    response = client.post(f"/orders/{order.order_no}/messages", {"text": "<b>Red</b> one?\r\nOr blue"})
    assert response.status_code == 302 and response["Location"] == f"/orders/{order.order_no}#messages"
    message = OrderMessage.objects.get(order=order)
    assert (message.text, message.from_merchant, message.author_id) == ("<b>Red</b> one?\nOr blue", False, me.pk)
    page = client.get(f"/orders/{order.order_no}").content.decode()
    assert "&lt;b&gt;Red&lt;/b&gt; one?<br>Or blue" in page and "<b>Red</b>" not in page


@pytest.mark.parametrize("text", ["", "x" * 501, "a\x00b"], ids=["empty", "too-long", "nul"])
def test_a_bad_message_is_a_400_that_keeps_nothing(client, me, text):
    order = _paid(shopper=me)
    response = client.post(f"/orders/{order.order_no}/messages", {"text": text})
    assert response.status_code == 400 and 'class="field-error"' in response.content.decode()
    response = client.post(f"/orders/{order.order_no}/messages", {"text": text}, **JSON)
    assert response.status_code == 400 and response.json()["code"] != 0
    assert not OrderMessage.objects.exists()


def test_a_form_without_its_field_is_a_400(client, me):
    order = _paid(shopper=me)
    assert client.post(f"/orders/{order.order_no}/messages", {}).status_code == 400
    assert client.get(f"/orders/{order.order_no}/messages").status_code == 405
    assert not OrderMessage.objects.exists()


def test_another_shoppers_order_is_a_404(client, me):
    order = _paid()
    assert client.post(f"/orders/{order.order_no}/messages", {"text": "Hi"}).status_code == 404
    assert client.post(f"/orders/{order.order_no}/messages", {"text": "Hi"}, **JSON).status_code == 404
    assert client.post("/orders/12%00/messages", {"text": "Hi"}).status_code == 404
    assert not OrderMessage.objects.exists()


def test_an_unpaid_order_has_no_form_and_refuses_a_message(client, me):
    order = buy(sale=make_sale(), user=me)
    assert 'id="message-form"' not in client.get(f"/orders/{order.order_no}").content.decode()
    assert client.post(f"/orders/{order.order_no}/messages", {"text": "Hi"}, **JSON).status_code == 409
    assert not OrderMessage.objects.exists()


def test_a_shopper_writing_too_often_is_told_to_wait(client, me, ratelimit_clock):
    orders = [_paid(shopper=me) for _ in range(2)]
    for n in range(5):
        assert client.post(f"/orders/{orders[n % 2].order_no}/messages", {"text": f"Hi {n}"}).status_code == 302
    response = client.post(f"/orders/{orders[0].order_no}/messages", {"text": "Hi again"})
    assert response.status_code == 429
    assert OrderMessage.objects.count() == 5


def test_the_json_twin_carries_the_thread(client, me):
    order = _paid(shopper=me)
    response = client.post(f"/orders/{order.order_no}/messages", {"text": "Hi"}, **JSON)
    assert response.json()["data"]["messages"][0]["text"] == "Hi"
    order_message_answer(order_id=order.pk, text="Hello", actor_id=None)
    thread = client.get(f"/orders/{order.order_no}", **JSON).json()["data"]["messages"]
    assert [(m["fromMerchant"], m["text"]) for m in thread] == [(False, "Hi"), (True, "Hello")]


# --- the merchant's admin -------------------------------------------------------------------


def test_the_merchant_sees_their_orders_with_a_message_to_answer_and_answers_one(client):
    merchant, other = make_merchant(), make_merchant()
    mine, theirs = _paid(merchant=merchant), _paid(merchant=other)
    for order in (mine, theirs):
        order_message_ask(order_id=order.pk, text="Is it <i>red</i>?", actor_id=order.user_id)
    client.force_login(merchant)
    listing = client.get("/admin/orders/order/").content.decode()
    assert "1 order with a message to answer" in listing
    filtered = client.get("/admin/orders/order/?messages=to-answer").content.decode()
    assert mine.order_no in filtered and theirs.order_no not in filtered
    page = client.get(f"/admin/orders/order/{mine.pk}/change/").content.decode()
    assert "Is it &lt;i&gt;red&lt;/i&gt;?" in page and 'id="answer_form"' in page
    response = client.post(f"/admin/orders/order/{mine.pk}/message/", {"text": "Yes,\nbright red"})
    assert response.status_code == 302 and response["Location"].endswith(f"/{mine.pk}/change/#messages")
    answer = OrderMessage.objects.get(order=mine, from_merchant=True)
    assert (answer.text, answer.author_id) == ("Yes,\nbright red", merchant.pk)
    assert "messages-link" not in client.get("/admin/orders/order/").content.decode()


class _Forms(HTMLParser):
    """The page's forms as they open, and the deepest they nest."""

    def __init__(self):
        super().__init__()
        self.open, self.deepest = 0, 0

    def handle_starttag(self, tag, attrs):
        if tag == "form":
            self.open += 1
            self.deepest = max(self.deepest, self.open)

    def handle_endtag(self, tag):
        if tag == "form":
            self.open -= 1


def test_the_order_page_shows_the_thread_above_its_close_button_outside_the_order_form(client):
    merchant = make_merchant()
    order = _paid(merchant=merchant)
    order_message_ask(order_id=order.pk, text="Is it red?", actor_id=order.user_id)
    client.force_login(merchant)
    page = client.get(f"/admin/orders/order/{order.pk}/change/").content.decode()
    assert page.count('class="closelink"') == 1
    assert page.index("Is it red?") < page.index('id="answer_form"') < page.index('class="closelink"')
    # A form inside the order's own would be dropped by the browser, its answer posted to the order.
    forms = _Forms()
    forms.feed(page)
    assert forms.deepest == 1 and forms.open == 0


def test_both_sides_of_the_thread_write_its_times_with_the_shops_time_zone(client, me):
    order = _paid(shopper=me)
    order_message_ask(order_id=order.pk, text="Is it red?", actor_id=me.pk)
    written = written_at(OrderMessage.objects.get(order=order).created_at)
    assert written in client.get(f"/orders/{order.order_no}").content.decode()
    client.force_login(order.goods.owner)
    assert written in client.get(f"/admin/orders/order/{order.pk}/change/").content.decode()


def test_another_merchants_order_cannot_be_answered(client):
    merchant = make_merchant()
    theirs = _paid()
    client.force_login(merchant)
    assert client.post(f"/admin/orders/order/{theirs.pk}/message/", {"text": "Hi"}).status_code == 404
    assert not OrderMessage.objects.exists()


def test_a_blank_answer_is_a_400_that_sends_nothing(client):
    merchant = make_merchant()
    order = _paid(merchant=merchant)
    client.force_login(merchant)
    response = client.post(f"/admin/orders/order/{order.pk}/message/", {"text": "  \n "})
    assert response.status_code == 400 and "errornote" in response.content.decode()
    assert not OrderMessage.objects.exists()


# --- the text -------------------------------------------------------------------------------


def test_the_shopper_is_texted_once_per_answer_in_their_language():
    english, chinese = make_user(), make_user(language="zh-hans")
    for shopper in (english, chinese):
        order = _paid(shopper=shopper)
        order_message_answer(order_id=order.pk, text="It ships\ntoday " + "x" * 80, actor_id=None)
    assert notices.merchant_replies_send() == 2
    assert notices.merchant_replies_send() == 0
    [en], [zh] = texts_to(english.mobile), texts_to(chinese.mobile)
    assert en.startswith("The merchant answered about your order") and "“It ships today x" in en
    assert "…”" in en and "#messages" in en
    assert zh.startswith("商家回复了你")
    assert Notice.objects.filter(kind="merchant-reply").count() == 2


def test_a_shopper_who_turned_such_texts_off_is_not_texted():
    shopper = make_user()
    NoticeSettings.objects.create(user=shopper, merchant_replies=False)
    order = _paid(shopper=shopper)
    order_message_answer(order_id=order.pk, text="Hello", actor_id=None)
    assert notices.merchant_replies_send() == 0
    assert texts_to(shopper.mobile) == []
