"""The item page (`/goods/detail/<id>`) and the answers it asks for: the sale's public state
every few seconds, where this shopper stands, the draw's public record. The page is the same
for everybody; the shopper's part comes as data and seckill.js words it with the page's panels
(panels.py)."""

from datetime import UTC, datetime
from urllib.parse import quote

from django.http import Http404, HttpRequest, HttpResponse
from django.middleware.csrf import get_token
from django.shortcuts import render
from django.urls import reverse
from django.utils.cache import patch_cache_control
from django.utils.html import format_html
from django.utils.safestring import SafeString
from django.utils.translation import gettext as _

from sales.models import SaleStatus
from sales.read_model import SaleEntries, SalePage
from sales.reminders import services as reminders
from sales.selectors import ENTRIES_CLOSED, ENTRIES_SOON, sale_page, sale_public_state
from seckill import selectors
from seckill.item import panels
from seckill.sale_id import sale_id_invalid, sale_id_read
from seckill_site.codes import Code
from seckill_site.http import PUBLIC_SECONDS, allow, fail, ok, positive_int, public_answer
from seckill_site.redis import now as redis_now
from seckill_site.shared import sale_key, share, shared
from seckill_site.templatetags.times import when
from users.models import User
from users.nav import nav_data
from waitingroom.room import room_read

# The draw's winners the item page lists; all of them are at /seckill/draw.
WINNERS_SHOWN = 100


def _shopper_state(request: HttpRequest, sale_id: int, status: int, entries: SaleEntries | None) -> dict | None:
    # request.user, not the session's id: a deactivated or revoked session is logged out.
    if not request.user.is_authenticated:
        return None
    if status == SaleStatus.NOT_STARTED and (entries is None or entries.state == ENTRIES_SOON):
        # Nobody can hold a unit yet, and this is when thousands of shoppers sit on the page
        # refreshing: no Redis or database read per refresh until the sale opens.
        return {"state": selectors.STATE_NONE}
    if status == SaleStatus.NOT_STARTED:  # a draw taking entries ahead: entered or not, from Redis
        return selectors.shopper_entry_state(user_id=request.user.pk, sale_id=sale_id)
    return selectors.shopper_sale_state(user_id=request.user.pk, sale_id=sale_id)


@allow("GET")
@shared(keys=lambda sale_id: [sale_key(sale_id)])
def item_page(request: HttpRequest, sale_id: str) -> HttpResponse:
    """The item page (`/goods/detail/<id>`): the sale, the same for everybody (an edge keeps it),
    with every panel the shopper may get in <template>s; where they stand comes from
    /seckill/shopperState, which the page asks for as it loads. It lives in seckill, not goods,
    because imports point down: goods < orders < seckill."""
    parsed = positive_int(sale_id)
    page = sale_page(sale_id=parsed) if parsed is not None else None
    if parsed is None or page is None:
        raise Http404(_("No such sale."))
    # Only a draw sale has a draw: a first-come sale's page asks PostgreSQL nothing.
    draw = _draw_shown(selectors.sale_draw_summary(sale_id=parsed)) if page.entries is not None else None
    context = {
        "sale": page.detail.sale,
        "stock_left": page.detail.stock_left,
        "page": page,
        "claimed_slot": _claimed_slot(page.claimed),
        "status": int(page.detail.status),
        "draw": draw,
        "shopper": None,
        "shared": True,
        # A room on: the page points the shopper to it (waiting.js asks where they stand).
        "waiting_room": room_read(parsed).on,
        "login_url": f"{reverse('users:index')}?next={quote(request.path)}",
        "register_url": f"{reverse('users:register')}?next={quote(request.path)}",
        # Every other panel, and a draw's entry and result, for seckill.js to fill (seckill.panels).
        "panels": panels.panel_variants(page=page),
        "entry_variants": panels.entry_variants() if page.entries is not None else [],
        "draw_slots": panels.draw_result_slots() if draw is not None and not draw["drawn"] else None,
    }
    response = render(request, "seckill/item.html", context)
    # Kept no longer than until the sale opens or ends: the page shows which.
    response.shared_seconds = _seconds_to_next_status(page)  # type: ignore[attr-defined]
    return response


def _claimed_slot(claimed: int | None) -> SafeString | None:
    """The share claimed where seckill.js updates it, inside its translated sentence."""
    return None if claimed is None else format_html('<span data-slot="claimed">{}</span>', claimed)


def _draw_shown(draw: dict | None) -> dict | None:
    """A made draw's winners as the draw box lists them: the first WINNERS_SHOWN, and how many more."""
    if draw is None or not draw["drawn"]:
        return draw
    winners = draw.get("winnerIds") or []
    shown = ", ".join(str(winner) for winner in winners[:WINNERS_SHOWN])
    return {**draw, "winnersShown": shown, "winnersMore": max(0, len(winners) - WINNERS_SHOWN)}


def _seconds_to_next_status(page: SalePage) -> int | None:
    entries = page.entries
    if entries is not None and entries.state != ENTRIES_CLOSED:
        # A draw sale's page changes when its entries open and when they close (the draw).
        return entries.opens_in if entries.state == ENTRIES_SOON else entries.closes_in
    if page.detail.status == SaleStatus.NOT_STARTED:
        return page.detail.remain_seconds
    return page.ends_in  # None once it has ended


def _draw_json(draw: dict | None) -> dict | None:
    """A draw sale's public box as data (seckill/draw_info.html shows it)."""
    if draw is None:
        return None
    public = {"drawn": draw["drawn"], "seedSha256": draw["seedSha256"], "drawWindowS": draw["drawWindowS"]}
    if draw["drawn"]:
        winners = draw.get("winnerIds") or []
        public.update(seed=draw["seed"], units=draw["units"], entrants=draw["entrants"],
                      winnerIds=winners[:WINNERS_SHOWN], winnerCount=len(winners))  # fmt: skip
    return public


@allow("GET")
def sale_state(request: HttpRequest, sale_id: str) -> HttpResponse:
    """The item page's refresh every few seconds: the sale's status, stock, window and draw as
    data, the same bytes for every visitor and language, so an edge (or seckill.fastpath where
    there is none) answers it for everybody for a second. Reads nothing of the visitor."""
    parsed = positive_int(sale_id)
    if parsed is None:
        return fail(Code.NOT_FOUND, _("no such sale"))
    data, exact_until = sale_public_state(sale_id=parsed)
    if data is None:
        return fail(Code.NOT_FOUND, _("no such sale"))
    data["draw"] = _draw_json(selectors.sale_draw_summary(sale_id=parsed)) if data["entries"] else None
    response = public_answer(ok(data), exact_until=exact_until)
    share(response, keys=[sale_key(parsed)], seconds=PUBLIC_SECONDS, stale=0, browser=PUBLIC_SECONDS)
    return response


def _clock(epoch: float) -> str:
    """An instant as the panel words it, in the shop's zone (seckill_site.templatetags.times)."""
    return when(datetime.fromtimestamp(epoch, tz=UTC))


def _shopper_json(state: dict | None) -> dict | None:
    if state is None:
        return None
    shopper = {k: v for k, v in state.items() if k not in ("payDeadlineAt", "drawAtTime")}
    if "payDeadline" in state:
        shopper["payDeadlineAt"] = _clock(state["payDeadline"])
    if state.get("drawAt"):
        shopper["drawAtTime"] = _clock(state["drawAt"])
    return shopper


@allow("GET")
def shopper_state(request: HttpRequest) -> HttpResponse:
    """Where this shopper stands with the sale (null when logged out), the shop's clock and the
    CSRF token a buy's POST takes (the shared page carries none). The item page asks it as it
    loads and when the answer can change (a buy, a deadline, the tab shown again), never on a
    timer. Data only: the page words it with the panels it carries (seckill/panel.html).

    With `nav=1` it is also the item page's nav answer, so the page costs one request as it
    loads: every key /user/me answers (users.nav). Always `reminder`: {"on": bool} while the
    page shows the reminder box (sales.reminders.services), else null and static/js/remind.js asks
    /reminders/<id>."""
    sale_id = sale_id_read(request.GET)
    if sale_id is None:
        return sale_id_invalid()
    page = sale_page(sale_id=sale_id)
    if page is None:
        return fail(Code.NOT_FOUND, _("no such sale"))
    status = page.detail.status
    shopper = _shopper_state(request, sale_id, status, page.entries)
    response = ok(
        {
            # The nav's part only for the page load's own ask (`nav=1`): reading the messages
            # marks them shown, and the page's later asks do not show them.
            **((nav_data(request) or {}) if request.GET.get("nav") == "1" else {}),
            "shopper": _shopper_json(shopper),
            "now": redis_now(),
            "csrfToken": get_token(request) if shopper is not None else None,
            "reminder": _reminder(request, sale_id, status, page.detail.stock_left) if shopper is not None else None,
        }
    )
    patch_cache_control(response, private=True, no_store=True)
    return response


def _reminder(request: HttpRequest, sale_id: int, status: int, stock_left: int) -> dict | None:
    # The box shows before the opening, and while the sale is on only once it is sold out: the
    # opening's crowd, with units left, costs PostgreSQL nothing here.
    user = request.user
    if not isinstance(user, User):  # logged out
        return None
    if status == SaleStatus.NOT_STARTED or (status == SaleStatus.ON and stock_left <= 0):
        return {"on": reminders.sale_reminder_on(user=user, sale_id=sale_id)}
    return None


@allow("GET")
def sale_draw(request: HttpRequest) -> HttpResponse:
    """A draw sale's public draw, for anyone to recompute (selectors.sale_draw_public)."""
    sale_id = sale_id_read(request.GET)
    if sale_id is None:
        return sale_id_invalid()
    public = selectors.sale_draw_public(sale_id=sale_id, lists=True)
    if public is None:
        return fail(Code.NOT_FOUND, _("this sale has no draw"))
    return ok(public)
