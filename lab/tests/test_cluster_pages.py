"""What the readers' views through the edge prove (lab/cluster/pages.py): page views answered
from the cache during a fault, failures judged by the fault's window, and the sell-out's purge
shown by the item page the edge held."""

from lab.cluster.pages import STOCK, View, purge_proof, summary

FAULT = [(10.0, 12.0)]


def item(at: float, stock: int, cache: str = "HIT") -> View:
    return View("item", at, at + 0.01, 200, cache, stock)


def test_views_from_the_cache_are_counted_in_all_and_during_the_fault():
    views = [item(1, 300, "MISS"), item(2, 300), item(11, 300), View("poll", 11.5, 11.6, 200, "MISS")]
    pages = summary(views, FAULT)
    assert (pages.views, pages.hits, pages.fault_views, pages.fault_hits) == (4, 2, 2, 1)
    assert not pages.errors and pages.errors_outside == 0


def test_a_failed_view_counts_against_the_row_only_outside_the_window_and_its_grace():
    views = [View("poll", 11.0, 11.1, 503), View("item", 17.0, 17.1, 0), View("list", 18.5, 18.6, 503)]
    pages = summary(views, FAULT)
    assert pages.errors == {("poll", 503): 1, ("item", 0): 1, ("list", 503): 1}
    assert pages.errors_outside == 1  # the list at 18.5 s: more than 6 s after the fault's end
    assert summary(views, []).errors_outside == 3  # no fault: every failure is outside


def test_the_purge_is_shown_when_the_held_page_gives_way_to_the_sold_out_one():
    views = [item(1, 300, "MISS"), item(2, 300), item(5, 300), item(9, 0, "MISS"), item(10, 0)]
    proof = purge_proof(views, sold_out_at=8.8)
    assert (proof.held, proof.seconds, proof.missed) == (300, 0.21, False)


def test_a_held_page_that_never_shows_the_sell_out_is_a_missed_purge():
    proof = purge_proof([item(1, 300, "MISS"), item(2, 300), item(20, 300)], sold_out_at=8.8)
    assert proof.missed and proof.held == 300


def test_nothing_is_proven_without_a_sell_out_or_a_held_page():
    assert not purge_proof([item(1, 300, "MISS"), item(2, 300)], sold_out_at=None).missed
    only_misses = [item(1, 300, "MISS"), item(9, 250, "MISS")]
    assert purge_proof(only_misses, sold_out_at=8.8) == purge_proof([], sold_out_at=8.8)
    assert not purge_proof(only_misses, sold_out_at=8.8).missed


def test_the_stock_is_read_off_the_item_page():
    assert STOCK.search('<main data-ends-at="1" data-stock="0">')[1] == "0"


def test_a_stale_copy_counts_as_answered_by_the_edge():
    """While the shop fails the edge hands out the copy it holds as STALE: a view answered from
    its cache, like a HIT."""
    views = [
        View("item", 0.0, 0.1, 200, "STALE", 5),
        View("item", 0.2, 0.3, 200, "HIT", 5),
        View("list", 0.4, 0.5, 200, "MISS"),
    ]
    found = summary(views, [(0.0, 1.0)])
    assert (found.hits, found.fault_hits, found.views) == (2, 2, 3)


def test_a_view_is_in_a_window_while_in_flight_at_any_moment_of_it_or_its_grace():
    from lab.cluster.pages import GRACE, in_windows

    def view(started: float, finished: float) -> View:
        return View("poll", started, finished, 200)

    assert in_windows(view(9.0, 10.0), FAULT)  # answered as the fault struck
    assert in_windows(view(12.0, 12.5), FAULT)  # sent as it healed
    assert in_windows(view(5.0, 20.0), FAULT)  # spanning it
    assert not in_windows(view(9.0, 9.99), FAULT)
    assert not in_windows(view(12.01, 13.0), FAULT)
    assert in_windows(view(12.01, 13.0), FAULT, GRACE)
    assert in_windows(view(12.0 + GRACE, 19.0), FAULT, GRACE)
    assert not in_windows(view(12.01 + GRACE, 19.0), FAULT, GRACE)
    assert in_windows(view(30.5, 30.6), [*FAULT, (30.0, 31.0)])  # any of several faults
    assert not in_windows(view(1.0, 2.0), [])


def test_a_miss_that_fetched_the_held_page_is_timed_from_the_sell_out():
    views = [
        View("item", 18.0, 18.4, 200, "MISS", 3),
        item(19.0, 3),
        item(21.0, 3),
        View("item", 22.0, 22.2, 200, "MISS", 0),
    ]
    proof = purge_proof(views, sold_out_at=20.0)
    assert (proof.held, proof.seconds, proof.fetched, proof.missed) == (3, 2.2, (-2.0, -1.6), False)
