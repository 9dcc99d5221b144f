import time

from django.conf import settings
from django.core.cache import cache
from django.http import HttpRequest, HttpResponse
from django.template.loader import render_to_string
from django.utils import translation
from django.utils.translation import get_language
from django.utils.translation import gettext as _

from sales import cache_keys as keys
from sales.selectors import sale_detail_public, sales_for_list
from seckill_site.codes import Code
from seckill_site.context import time_zone
from seckill_site.http import PUBLIC_SECONDS, allow, fail, ok, positive_int, public_answer
from seckill_site.redis import lock_try
from seckill_site.redis.keys import jittered
from seckill_site.shared import SALES_KEY, path_language, sale_key, share, shared
from users.selectors import user_public_data

LIST_LOCK_WAIT_SECONDS = 2.0
LIST_LOCK_POLL_SECONDS = 0.05


def _list_html(request: HttpRequest) -> str:
    """The whole list page from Redis; on a miss one request renders it under a short mutex
    while the others wait for its result, so a stampede renders it once (seed 000 page cache).

    The cached HTML holds nothing user-specific: the greeting comes from /user/me.
    """
    language = get_language()
    key = keys.goods_list_html(language)
    html = cache.get(key)
    if html is not None:
        return html
    deadline = time.monotonic() + LIST_LOCK_WAIT_SECONDS
    while True:
        with lock_try(keys.goods_list_lock(language), ttl=keys.GOODS_LIST_LOCK_TTL) as token:
            if token is not None:
                # The holder before us may have stored it between our read and our lock.
                html = cache.get(key)
                return html if html is not None else _list_render(key)
            if time.monotonic() > deadline:
                # The holder is slow or gone: render without the lock rather than fail. Only
                # the holder releases its lock (owner token), so this never frees it for others.
                return _list_render(key)
        time.sleep(LIST_LOCK_POLL_SECONDS)
        html = cache.get(key)
        if html is not None:
            return html


def _list_render(key: str) -> str:
    # No request here (the page is shared by everyone), so no context processors: the zone
    # the times are shown in is passed in.
    html = render_to_string("goods/list.html", {"sales": sales_for_list(), **time_zone(None)})
    cache.set(key, html, jittered(settings.GOODS_LIST_CACHE_SECONDS))
    return html


@allow("GET")
@shared(keys=lambda: [SALES_KEY])
def goods_list(request: HttpRequest) -> HttpResponse:
    return HttpResponse(_list_html(request))


@allow("GET")
def goods_details(request: HttpRequest, sale_id: str) -> HttpResponse:
    """Seed 000 `/goods/getDetails/{goodsId}`: status, seconds to start, goods, user. In the
    URL's language, like the item page that polls it; anonymous, it is everybody's for a second."""
    with translation.override(path_language(request.path_info)):
        parsed = positive_int(sale_id)
        detail, exact_until = sale_detail_public(sale_id=parsed) if parsed is not None else (None, 0.0)
        if parsed is None or detail is None:
            return fail(Code.NOT_FOUND, _("no such sale"))
        data = detail.wire()
        if request.user.is_authenticated:
            data["user"] = user_public_data(request.user)
            return ok(data)
        data["user"] = None
        # A CDN, the browser and seckill.fastpath may keep it; `Vary: Cookie` stays, since a
        # logged-in visitor's answer differs (the edge passes those: docs/edge.md).
        response = public_answer(ok(data), exact_until=exact_until)
        share(response, keys=[sale_key(parsed)], seconds=PUBLIC_SECONDS, stale=0, browser=PUBLIC_SECONDS)
        response.headers["Content-Language"] = translation.get_language()
        return response
