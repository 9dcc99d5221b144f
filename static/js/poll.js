// How the item page polls /seckill/result after "queued" (used by seckill.js; tested with node).
// "Queued" is a promise: the reconciler writes a stalled order within about two minutes, so
// a shopper still waiting is never told "sold out" — only a "-1" from the server says that.
(function (exports) {
  var plan = {
    // 0.3 s, 0.6 s, 1.2 s … capped at 3 s; after SLOW_AFTER polls, every 10 s.
    FIRST_MS: 300,
    CAP_MS: 3000,
    SLOW_CAP_MS: 10000,
    SLOW_AFTER: 20, // about 50 s: then the page says the order is still being processed
    MAX_POLLS: 200, // about 30 minutes: then it stops asking and points at the orders page
  };

  plan.delay = function (attempt) {
    var cap = attempt < plan.SLOW_AFTER ? plan.CAP_MS : plan.SLOW_CAP_MS;
    return Math.min(plan.FIRST_MS * Math.pow(2, Math.min(attempt, 10)), cap);
  };

  // What to show after poll number `attempt` answered `data` (null: no answer, e.g. offline):
  // "ordered" | "failed" | "waiting" | "processing" (keep polling) | "stopped" (stop polling).
  plan.state = function (data, attempt) {
    if (data !== null && data > 0) return "ordered";
    // -2: entered in a draw not made yet (docs/draw.md), so keep asking; -3 not drawn: over.
    if (data !== null && data < 0 && data !== -2) return "failed";
    if (attempt + 1 >= plan.MAX_POLLS) return "stopped";
    return attempt + 1 >= plan.SLOW_AFTER ? "processing" : "waiting";
  };

  exports.SeckillPoll = plan;
})(typeof module !== "undefined" && module.exports ? module.exports : window);
