"""A draw sale's entries spread over K entry shards (docs/draw.md, "Scale"), against real Redis
and PostgreSQL: one entry per shopper across the shards under concurrency, each shard on a slot
of its own, the draw merging them equal to the published recomputation, and made once.

The draw's tests of test_draw.py run here again with K=4 (imported below: pytest collects them
in this module, under its autouse fixture); the cluster suite runs this file on a 3-node cluster
(seckill_site/tests/test_redis_cluster.py), where the shards land on different primaries.
"""

import threading
from collections import Counter
from concurrent.futures import ThreadPoolExecutor

import pytest
from django.conf import settings as django_settings
from redis.crc import key_slot

from sales import sale_state
from sales.models import SaleDraw
from sales.sale_state import keys
from seckill.services import draw as draw_service
from seckill.services import writer
from seckill.tests.test_draw import (  # noqa: F401 (collected again here, with K=4)
    test_a_draw_that_crashed_midway_is_finished_without_a_double_win,
    test_draw_makes_winners_orders_and_losers_not_drawn,
    test_entering_takes_no_stock_and_counts_once,
    test_exactly_one_draw_under_concurrent_drawers_threads_and_processes,
    test_stock_left_after_the_draw_is_sold_first_come_first_served_and_the_first_buy_draws,
    test_the_live_view_counts_entrants_and_shows_the_outcome,
    test_the_published_draw_reproduces_the_winners_and_is_kept_in_the_cache,
)
from seckill.tests.test_draw_ahead import (  # noqa: F401 (collected again here, with K=4)
    test_after_the_entries_closed_a_latecomer_is_told_entries_closed_not_sold_out,
    test_before_entries_open_an_entry_is_refused_as_not_started_and_keeps_its_path,
    test_entries_are_taken_before_the_opening_once_each_and_take_no_stock,
    test_the_draw_at_the_opening_includes_the_pre_registered_and_is_recomputable,
)
from seckill_site.redis import client
from testutils.draws import recomputed, redis_invariants, window_over
from testutils.factories.sales import make_draw_sale
from testutils.factories.users import make_users

SHARDS = 4


@pytest.fixture(autouse=True)
def sharded(settings):
    settings.SECKILL_DRAW_SHARDS = SHARDS
    sale_state.process_marks_clear()
    yield
    sale_state.process_marks_clear()


def shard_sets(sale) -> list[set[int]]:
    return [{int(m) for m in client().smembers(keys.entrants(sale.pk, k, SHARDS))} for k in range(SHARDS)]


def test_one_shard_is_the_sale_itself_and_k_shards_have_their_own_slots():
    assert keys.entrants(7, 0, 1) == keys.entrants(7) and keys.shard_window(7, 0, 1) == keys.window(7)
    assert keys.entry_path(7, 3, 1) == keys.path(7, 3) and keys.entry_rate(7, 3, 1) == keys.gate_rate(7, 3)
    slots = [key_slot(keys.entrants(7, k, 16).encode()) for k in range(16)]
    assert [slot * 16 // 16384 for slot in slots] == list(range(16))  # shard k in the k-th 16th of the slots
    for k in range(16):  # everything enter.lua touches on shard k shares shard k's slot
        user = k + 16 * 5  # entry_shard(user, 16) == k
        shard_keys = [
            keys.shard_window(7, k, 16),
            keys.entrants(7, k, 16),
            keys.entries(7, k, 16),
            keys.entry_path(7, user, 16),
            keys.entry_rate(7, user, 16),
        ]
        assert {key_slot(key.encode()) for key in shard_keys} == {slots[k]}
    if django_settings.REDIS_IS_CLUSTER:  # and so to every primary, 5 or 6 shards each of 3
        nodes = Counter(client().nodes_manager.get_node_from_slot(slot).name for slot in slots)
        assert len(nodes) == len(client().get_primaries()) and max(nodes.values()) <= 6, nodes


@pytest.mark.django_db(transaction=True)
def test_one_entry_per_shopper_across_shards_under_concurrency(flushes):
    """Sixteen threads enter 40 shoppers, each shopper eight times at once with fresh paths: every
    shopper is entered exactly once, in the one shard user_id % K names, and nowhere else."""
    sale = make_draw_sale(stock=5)
    users = make_users(40)
    for user in users:  # the copies on the shards: what the captcha step leaves (path_set)
        client().set(keys.entry_path(sale.pk, user.pk, SHARDS), f"p{user.pk}", ex=60)
    tries = [user.pk for _ in range(8) for user in users]  # each shopper's eight tries spread out
    start = threading.Event()

    def enter(user_id):
        start.wait(timeout=30)  # all sixteen threads start together
        return user_id, sale_state.enter(sale_id=sale.pk, user_id=user_id, path=f"p{user_id}")

    with ThreadPoolExecutor(16) as pool:
        futures = [pool.submit(enter, user_id) for user_id in tries]
        start.set()
        answers = [future.result() for future in futures]
    first = Counter(user_id for user_id, entered in answers if entered.refusal is None and entered.first)
    assert first == Counter({user.pk: 1 for user in users}), first
    # The others: entered before (the same answer), or their path was taken by the first.
    assert all(entered.refusal in (None, sale_state.Refusal.PATH_INVALID) for _, entered in answers), Counter(
        entered.refusal for _, entered in answers
    )
    sets = shard_sets(sale)
    assert sum(len(members) for members in sets) == 40
    for k, members in enumerate(sets):
        assert members == {user.pk for user in users if user.pk % SHARDS == k}
    assert sale_state.entrants(sale.pk) == sorted(user.pk for user in users)
    assert sale_state.entrants_count(sale.pk) == 40 and sum(sale_state.entries_per_second(sale.pk).values()) == 40
    assert redis_invariants(sale) == {"stock": 5, "reserved": 0, "buyers": 0}  # no unit taken
    # Nothing per entry on the sale's slot: no answer key there (the shard is the answer).
    assert not client().exists(keys.result(sale.pk, users[0].pk))
    assert sale_state.result(sale_id=sale.pk, user_id=users[0].pk) == sale_state.RESULT_ENTERED


@pytest.mark.django_db
def test_a_closed_shard_takes_no_entry_and_a_buyer_is_left_out_of_the_draw(flushes):
    sale = make_draw_sale(stock=3)
    users = make_users(9)
    for user in users:
        sale_state.path_set(sale_id=sale.pk, user_id=user.pk, path="p")
        assert sale_state.enter(sale_id=sale.pk, user_id=user.pk, path="p").first
    # A shopper who holds a unit already (a live order the reconciler loaded): no second one.
    buyer = users[0]
    client().sadd(keys.buyers(sale.pk), buyer.pk)
    client().decr(keys.stock(sale.pk))
    window_over(sale)
    assert sale_state.draw_due(sale.pk)
    for k in range(SHARDS):
        assert client().hget(keys.shard_window(sale.pk, k, SHARDS), "closed") == b"1"
    late = make_users(1)[0]
    sale_state.path_set(sale_id=sale.pk, user_id=late.pk, path="p")
    assert sale_state.enter(sale_id=sale.pk, user_id=late.pk, path="p").refusal is sale_state.Refusal.IN_DRAW

    report = draw_service.sale_draw(sale_id=sale.pk)

    draw = SaleDraw.objects.get(sale=sale)
    assert draw.entrant_ids == sorted(user.pk for user in users[1:])  # the buyer is not drawn
    assert (report.state, report.winners, report.applied) == ("drawn", 2, 2) and draw.winner_ids == recomputed(sale)
    assert redis_invariants(sale) == {"stock": 0, "reserved": 2, "buyers": 3}


@pytest.mark.django_db
def test_a_draw_of_many_entrants_over_shards_equals_the_recomputation_and_is_applied_once(flushes, monkeypatch):
    """300 entrants over 4 shards read in SSCAN pages of 7, 40 units applied 9 per call, then
    every chunk applied again (a second drawer of the same stored draw): the same 40 winners,
    each with one reservation, the recomputation from the published list."""
    monkeypatch.setattr(sale_state.draw, "ENTRANTS_PAGE", 7)
    monkeypatch.setattr(keys, "DRAW_CHUNK", 9)
    sale = make_draw_sale(stock=40)
    users = make_users(300)
    pipeline = client().pipeline(transaction=False)
    for user in users:
        pipeline.set(keys.entry_path(sale.pk, user.pk, SHARDS), "p", ex=60)
    pipeline.execute()
    for user in users:
        assert sale_state.enter(sale_id=sale.pk, user_id=user.pk, path="p").first
    assert min(len(members) for members in shard_sets(sale)) == 75
    window_over(sale)

    assert draw_service.sale_draw(sale_id=sale.pk).state == "drawn"
    draw = SaleDraw.objects.get(sale=sale)
    assert draw.entrant_ids == sorted(user.pk for user in users) and len(draw.winner_ids) == 40
    assert draw.winner_ids == recomputed(sale)
    client().delete(keys.drawn(sale.pk))  # as if the last chunk had not marked it: apply it all again
    again = sale_state.draw_apply(
        sale_id=sale.pk,
        winners=[(u, draw_service.reservation_id(sale.pk, u)) for u in draw.winner_ids],
        flush_mark_ms=5000,
    )
    assert again.applied == 0
    assert redis_invariants(sale) == {"stock": 0, "reserved": 40, "buyers": 40}
    assert writer.sale_flush(sale_id=sale.pk).created == 40
    # A winner whose order was cancelled since (unit_return: answer gone, buyer out, unit back)
    # is not drawn a second time by a late apply of the same chunk.
    cancelled = draw.winner_ids[0]
    client().delete(keys.result(sale.pk, cancelled))
    client().srem(keys.buyers(sale.pk), cancelled)
    client().incr(keys.stock(sale.pk))
    client().delete(keys.drawn(sale.pk))
    late = sale_state.draw_apply(
        sale_id=sale.pk, winners=[(cancelled, draw_service.reservation_id(sale.pk, cancelled))], flush_mark_ms=5000
    )
    assert not late.drawn_before and late.applied == 0
    assert redis_invariants(sale) == {"stock": 1, "reserved": 0, "buyers": 39}
    client().sadd(keys.buyers(sale.pk), cancelled)  # as it was, for the answers below
    for user in users:
        answer = sale_state.result(sale_id=sale.pk, user_id=user.pk)
        if user.pk != cancelled:
            assert (answer is not None and answer > 0) if user.pk in draw.winner_ids else answer == -3


@pytest.mark.django_db
def test_a_shard_marked_closed_takes_no_entry_whatever_its_clock_says(flushes):
    """draw_due.lua's mark: a node whose clock lags behind the one the drawer asked still takes
    no entry once the drawer found its shard due."""
    sale = make_draw_sale(stock=1)
    users = make_users(SHARDS)
    closed = keys.entry_shard(users[0].pk, SHARDS)
    client().hset(keys.shard_window(sale.pk, closed, SHARDS), "closed", 1)
    answers = {}
    for user in users:
        sale_state.path_set(sale_id=sale.pk, user_id=user.pk, path="p")
        answers[keys.entry_shard(user.pk, SHARDS)] = sale_state.enter(sale_id=sale.pk, user_id=user.pk, path="p")
    assert answers.pop(closed).refusal is sale_state.Refusal.IN_DRAW
    assert all(entered.first for entered in answers.values())


@pytest.mark.django_db
def test_the_captcha_step_of_a_sharded_sale_runs_on_the_shoppers_shard_and_its_refusals_add_up(settings, flushes):
    """Everything per shopper before the entry (captcha answer, limits, the path's copy) lives
    on the shopper's shard; the sale's slot keeps one copy of the path, for buying after the draw."""
    from seckill.services import paths
    from testutils.shoppers import path_for

    settings.SECKILL_CAPTCHAS_PER_MINUTE = 1
    sale = make_draw_sale(stock=1)
    users = make_users(SHARDS)
    for user in users:
        path = path_for(user.pk, sale.pk)
        shard = keys.entry_shard(user.pk, SHARDS)
        assert client().get(keys.entry_path(sale.pk, user.pk, SHARDS)) == path.encode()
        assert client().get(keys.path(sale.pk, user.pk)) == path.encode()
        assert client().exists(keys.limit(sale.pk, "captcha", user.pk, SHARDS))
        assert key_slot(keys.limit(sale.pk, "captcha", user.pk, SHARDS).encode()) == key_slot(
            keys.entrants(sale.pk, shard, SHARDS).encode()
        )
        with pytest.raises(paths.SaleLimitReached):
            paths.captcha_create(user_id=user.pk, sale_id=sale.pk)  # the second in a minute
        assert sale_state.enter(sale_id=sale.pk, user_id=user.pk, path=path).first
    assert not client().exists(keys.limit(sale.pk, "captcha", users[0].pk))  # nothing on the sale's slot
    assert sale_state.refusals(sale.pk) == {"captcha": SHARDS}


@pytest.mark.django_db
def test_a_process_whose_copy_of_the_window_predates_the_shards_enters_on_the_right_shard(flushes):
    """A process read the sale's window before it became a draw sale with shards (its copy,
    kept WINDOW_CACHE_SECONDS, says one shard): enter.lua on the sale's slot sees the shards
    and sends it to the shopper's shard, instead of an entry the drawer would never read."""
    sale = make_draw_sale(stock=1)
    user = make_users(1)[0]
    sale_state.path_set(sale_id=sale.pk, user_id=user.pk, path="p")
    start, end, fetched, draw, _, opens = sale_state.marks._window_cached(sale.pk)
    sale_state.marks._windows[sale.pk] = (start, end, fetched, draw, 1, opens)
    assert sale_state.enter(sale_id=sale.pk, user_id=user.pk, path="p").first
    assert sale_state.entrants(sale.pk) == [user.pk]
    assert not client().exists(keys.entrants(sale.pk))  # nothing in the one-shard set


@pytest.mark.django_db
def test_a_deleted_sale_leaves_no_key_on_its_shards(flushes):
    sale = make_draw_sale(stock=1)
    for user in make_users(SHARDS):
        sale_state.path_set(sale_id=sale.pk, user_id=user.pk, path="p")
        assert sale_state.enter(sale_id=sale.pk, user_id=user.pk, path="p").first
    assert list(client().scan_iter(match=keys.shards_pattern(sale.pk)))
    sale_state.sale_forget(sale_id=sale.pk)
    assert not list(client().scan_iter(match=keys.shards_pattern(sale.pk)))
    assert not list(client().scan_iter(match=keys.pattern(sale.pk)))
