"""seckill.sale_id: the one reader of a request's `goodsId`, and its 400."""

import json

import pytest
from django.http import QueryDict

from seckill.sale_id import sale_id_invalid, sale_id_plain, sale_id_read

SPELLINGS = ["goodsId=7", "goodsId=007", "goodsId=+7", "goodsId=%207", "goodsId=0", "goodsId=-7", "goodsId=x",
             "goodsId=", "goodsId=1&goodsId=2", "csrfmiddlewaretoken=t&goodsId=7", "goodsid=7", "",
             "goodsId=" + "9" * 18, "goodsId=" + "9" * 19]  # fmt: skip


@pytest.mark.parametrize("encoded", SPELLINGS)
def test_the_plain_reading_is_the_full_reading_where_it_answers(encoded):
    """Below Django the fast path reads a plain `goodsId=<id>` without a parser: it must never
    answer an id other than the one Django's view reads from the same query or form."""
    read = sale_id_read(QueryDict(encoded))
    plain = sale_id_plain(encoded)
    assert plain is None or plain == read
    assert sale_id_plain(encoded.encode()) == plain


def test_a_query_a_form_and_a_json_body_are_read_alike():
    assert sale_id_read(QueryDict("goodsId=12")) == sale_id_read(json.loads('{"goodsId": 12}')) == 12
    assert sale_id_read(json.loads('{"goodsId": "12"}')) == 12
    for bad in ('{"goodsId": true}', '{"goodsId": 1.5}', '{"goodsId": 0}', '{"goods_id": 12}', '{"goodsId": null}'):
        assert sale_id_read(json.loads(bad)) is None, bad


def test_a_bad_sale_id_is_a_clear_400():
    response = sale_id_invalid()
    assert response.status_code == 400
    assert json.loads(response.content)["msg"] == "goodsId must be a positive integer"
