"""A sale's shared state in Redis, beside the sale's model.

The one package that names a sale's keys (`sk:{id}:*`, keys.py) or runs its Lua scripts
(lua/): the gate, the order writer, cancellations, merchant edits, the reconciler, the pages and
the metrics all call the functions exported here. Every transition is one Lua call that checks
the state it starts from and answers a no-op from any other, so a late, repeated or crashed
caller changes nothing. Each module holds one family of transitions and states its table:

- marks: what this process knows without asking (sold-out marks, window copies);
- reservation: a unit handed to a shopper, until the writer settles its order;
- draw: a draw sale's entries, its draw and its entry shards;
- limits: the per-sale limits, the captcha's answer and the one-time path;
- stock: loading a sale, a merchant's edits, removal, units of cancelled orders;
- answers: the stored results and the refusals, each with the code a shopper is told.

Every key of a sale shares its hash tag, so each script stays in one Redis Cluster slot (a
draw sale's entry shards have one tag each: draw.py).
"""

from goods.sale_state.answers import RESULT_ENTERED, RESULT_FAILED, RESULT_NOT_DRAWN, RESULT_QUEUED, Refusal
from goods.sale_state.draw import (
    DrawApplied,
    Entered,
    draw_apply,
    draw_due,
    draw_lock,
    drawn,
    drawn_mark,
    enter,
    enter_call,
    entrants,
    entrants_count,
    entries_per_second,
)
from goods.sale_state.limits import captcha_answer_set, captcha_answer_take, limit_take, path_set, refusals
from goods.sale_state.marks import (
    draw_at,
    process_marks_clear,
    refusal_known,
    shards,
    sold_out_clear,
    sold_out_known,
    sold_out_mark,
    window,
    window_refusal,
)
from goods.sale_state.reservation import (
    Claim,
    GiveBack,
    Reservation,
    Reserved,
    Settle,
    Settlement,
    claim,
    flush_mark_take,
    give_back,
    reservation_ids,
    reservations,
    reservations_count,
    reservations_oldest,
    reserve,
    result,
    settle,
)
from goods.sale_state.stock import (
    LoadReport,
    Snapshot,
    StockTake,
    UnitReturn,
    load,
    rebuild_claim,
    reconcile_lock,
    sale_forget,
    sale_open,
    stock_add,
    stock_left,
    stock_take,
    ticket,
    unit_return,
    window_set,
)

__all__ = [
    "RESULT_ENTERED",
    "RESULT_FAILED",
    "RESULT_NOT_DRAWN",
    "RESULT_QUEUED",
    "Claim",
    "DrawApplied",
    "Entered",
    "GiveBack",
    "LoadReport",
    "Refusal",
    "Reservation",
    "Reserved",
    "Settle",
    "Settlement",
    "Snapshot",
    "StockTake",
    "UnitReturn",
    "captcha_answer_set",
    "captcha_answer_take",
    "claim",
    "draw_apply",
    "draw_at",
    "draw_due",
    "draw_lock",
    "drawn",
    "drawn_mark",
    "enter",
    "enter_call",
    "entrants",
    "entrants_count",
    "entries_per_second",
    "flush_mark_take",
    "give_back",
    "limit_take",
    "load",
    "path_set",
    "process_marks_clear",
    "rebuild_claim",
    "reconcile_lock",
    "refusal_known",
    "refusals",
    "reservation_ids",
    "reservations",
    "reservations_count",
    "reservations_oldest",
    "reserve",
    "result",
    "sale_forget",
    "sale_open",
    "settle",
    "shards",
    "sold_out_clear",
    "sold_out_known",
    "sold_out_mark",
    "stock_add",
    "stock_left",
    "stock_take",
    "ticket",
    "unit_return",
    "window",
    "window_refusal",
    "window_set",
]
