// Countdowns shared by every page: SeckillTime.duration(seconds) formats a span of time in
// the page's language ("2 days 03:15:07", "03:15:07", "00:14:56"), and every [data-deadline]
// (epoch seconds; "time left to pay") counts down to zero, then the page reloads once so it
// shows the order as expired. With data-now (the server's clock when it rendered the element)
// it counts by the server's clock, not the browser's. Elements are looked up on every tick: the item page replaces
// its panel when the shopper's state changes.
(function () {
  var gettext = window.gettext || function (s) { return s; };
  var ngettext = window.ngettext || function (one, many, n) { return n === 1 ? one : many; };
  var interpolate = window.interpolate || function (format, args) { return format.replace("%s", args[0]); };
  function pad(n) { return String(n).padStart(2, "0"); }

  // A span as {days, h, m, s}, whole seconds.
  function parts(seconds) {
    seconds = Math.max(0, Math.round(seconds));
    return { days: Math.floor(seconds / 86400), h: Math.floor(seconds % 86400 / 3600),
             m: Math.floor(seconds % 3600 / 60), s: seconds % 60 };
  }
  function days(n) { return interpolate(ngettext("%s day", "%s days", n), [n]); }
  function duration(seconds) {
    var p = parts(seconds);
    // Always hours, minutes and seconds: "57:03" alone reads as 57 hours and 3 minutes.
    var clock = pad(p.h) + ":" + pad(p.m) + ":" + pad(p.s);
    return p.days ? days(p.days) + " " + clock : clock;
  }
  // tick: the deadlines now, for a page that has just put one in (the item page's panel), so
  // it never shows empty for the second until the next tick.
  window.SeckillTime = { duration: duration, parts: parts, days: days, pad: pad, gettext: gettext, tick: tick };

  var reloading = false;
  function tick() {
    var now = Date.now() / 1000;
    document.querySelectorAll("[data-deadline]").forEach(function (el) {
      if (el.dataset.now && !el.dataset.offset) el.dataset.offset = String(Number(el.dataset.now) - now);
      var left = Math.max(0, Math.round(Number(el.dataset.deadline) - now - Number(el.dataset.offset || 0)));
      el.textContent = interpolate(gettext("%s left to pay"), [duration(left)]);
      if (left === 0 && !reloading) { reloading = true; setTimeout(function () { location.reload(); }, 3000); }
    });
  }
  if (!document.querySelector("[data-deadline]") && !document.getElementById("sale")) return;
  tick();
  setInterval(tick, 1000);
})();
