"""How a request reaches seckill.fastpath: the WSGI_MIDDLEWARE setting names it by a dotted path
(the settings load before any app, so they cannot import it), which seckill_site/wsgi.py imports
after Django's setup. This test is the link from that string to the class."""

from django.utils.module_loading import import_string

from seckill.fastpath import FastPath
from seckill.fastpath.detail import DetailCopy
from seckill.fastpath.poll import ResultPoll
from seckill.fastpath.refusal import ClosedSaleRefusal
from seckill.fastpath.waiting import PassRequired, WaitingStatus
from seckill.fastpath.waitlist import WaitingListStatus
from seckill_site.metrics import ThreadCounts


def test_the_wsgi_middleware_setting_names_the_fast_path(settings):
    assert [import_string(dotted) for dotted in settings.WSGI_MIDDLEWARE] == [FastPath]


def test_the_fast_path_asks_the_answerers_of_the_requests_method_in_order():
    fast = FastPath(lambda environ, start_response: [b""], counts=ThreadCounts())
    asked = {method: [type(answerer) for answerer in answerers] for method, answerers in fast.answerers.items()}
    assert asked == {
        "POST": [ClosedSaleRefusal, PassRequired],
        "GET": [DetailCopy, ResultPoll, WaitingStatus, WaitingListStatus, PassRequired],
    }
