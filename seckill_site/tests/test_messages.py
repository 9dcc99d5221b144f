"""The message middleware makes its storage only for a request that uses messages."""

from unittest import mock

from django.contrib import messages
from django.http import HttpResponse
from django.test import RequestFactory

from seckill_site import messages as lazy_messages
from seckill_site.messages import LazyMessageMiddleware


def _request():
    request = RequestFactory().post("/seckill/abc/doSeckill", {"goodsId": "1"})
    request.session = {}
    return request


def test_a_request_that_uses_no_message_builds_no_storage():
    with mock.patch.object(lazy_messages, "default_storage", wraps=lazy_messages.default_storage) as storage:
        response = LazyMessageMiddleware(lambda request: HttpResponse("{}"))(_request())
    assert storage.call_count == 0
    assert "messages" not in response.cookies


def test_a_message_added_is_stored_for_the_next_request():
    def view(request):
        messages.success(request, "paid")
        return HttpResponse("ok")

    response = LazyMessageMiddleware(view)(_request())
    assert "messages" in response.cookies  # FallbackStorage: the cookie first

    following = _request()
    following.COOKIES["messages"] = response.cookies["messages"].value
    seen = []

    def page(request):
        seen.extend(str(message) for message in messages.get_messages(request))
        return HttpResponse("ok")

    LazyMessageMiddleware(page)(following)
    assert seen == ["paid"]
