"""The fairness replay's accounts and sales (lab/opening.py), on the test database and Redis:
shoppers found again by their mobiles rather than made twice, and the sale each seed opens,
first come or by draw, put on through the merchant's service."""

from datetime import timedelta

import pytest
from django.utils import timezone

from lab.opening import MERCHANT_MOBILE, MOBILE_PREFIX, fairness_sale, shoppers
from sales import sale_state
from sales.models import Admission
from users.models import User

pytestmark = pytest.mark.django_db(transaction=True)


def test_shoppers_are_made_once_and_found_again_by_their_mobiles():
    first = shoppers(3, 0)
    assert len(set(first)) == 3
    mobiles = list(User.objects.filter(pk__in=first).order_by("mobile").values_list("mobile", flat=True))
    assert mobiles == [f"{MOBILE_PREFIX}{n:09d}" for n in range(3)]
    assert shoppers(3, 0) == first  # the next seed reuses them
    overlapping = shoppers(3, 2)
    assert overlapping[0] == first[2] and len(set(overlapping) | set(first)) == 5
    assert User.objects.filter(mobile__startswith=MOBILE_PREFIX).count() == 5


@pytest.mark.parametrize(("mode", "admission"), [("fcfs", Admission.FCFS), ("draw", Admission.DRAW)])
def test_each_seed_opens_a_sale_of_its_mode_on_time_and_loaded(mode, admission):
    User.objects.create(mobile=MERCHANT_MOBILE, nickname="fairness merchant", is_staff=True)
    sale = fairness_sale(mode=mode, units=4, window=5, opening=60)
    assert (sale.admission, sale.draw_window_s, sale.stock_count) == (admission, 5, 4)
    assert abs((sale.start_at - timezone.now()) - timedelta(seconds=60)) < timedelta(seconds=10)
    assert sale.end_at - sale.start_at == timedelta(minutes=10)
    assert sale_state.stock_left([sale.pk]) == {sale.pk: 4}
    again = fairness_sale(mode=mode, units=1, window=5, opening=60)
    assert again.goods_id == sale.goods_id and again.pk != sale.pk  # one merchant's goods, a sale per seed
