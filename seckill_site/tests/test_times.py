import pytest
from django.utils import timezone, translation

from seckill_site.templatetags.times import when
from testutils.factories.goods import make_goods
from testutils.factories.sales import make_sale


def test_a_time_today_is_the_time_and_any_other_has_its_date_and_year():
    now = timezone.localtime()
    later = now.replace(year=now.year + 1)
    with translation.override("en"):
        assert when(now) == f"{now:%H:%M}"
        assert when(now, "full") == f"{now.day} {now:%b %Y, %H:%M}"
        assert when(later) == f"{later.day} {later:%b %Y, %H:%M}"
    with translation.override("zh-hans"):
        assert when(later) == f"{later.year}年{later.month}月{later.day}日 {later:%H:%M}"


@pytest.mark.django_db
@pytest.mark.parametrize("prefix", ["", "/zh-hans"])
def test_the_item_page_writes_its_times_one_way_with_their_year(client, prefix):
    sale = make_sale(goods=make_goods(name="Dated"), starts_in=3 * 86400)
    page = client.get(f"{prefix}/goods/detail/{sale.pk}").content.decode()
    start = timezone.localtime(sale.start_at)
    with translation.override("zh-hans" if prefix else "en"):
        written = when(sale.start_at, "full")
    assert str(start.year) in written
    # The start line and the sale's window both say it so, and no "12-02 05:36" is left.
    assert page.count(written) >= 2, written
    assert f"{start:%m-%d %H:%M}" not in page and f"{start:%Y-%m-%d %H:%M}" not in page
