// The sale list: "Ends in" / "Starts in" for sales within a day, and which of a draw's entry
// lines shows (not open yet, open now, none once drawn), from the epochs in the page (which is
// cached for everyone, so nothing else on it can follow the clock).
(function () {
  var gettext = window.gettext || function (s) { return s; };
  var interpolate = window.interpolate || function (format, args) { return format.replace("%s", args[0]); };
  var duration = window.SeckillTime.duration;
  var items = document.querySelectorAll("[data-ends],[data-starts]");
  var entries = document.querySelectorAll("[data-entries-opens]");
  if (!items.length && !entries.length) return;
  function tick() {
    var now = Date.now() / 1000;
    entries.forEach(function (el) {
      var state = now >= Number(el.dataset.entriesCloses) ? "" : now < Number(el.dataset.entriesOpens) ? "ahead" : "open";
      el.querySelectorAll("[data-entries-state]").forEach(function (line) {
        line.hidden = line.dataset.entriesState !== state;
      });
    });
    items.forEach(function (el) {
      var ends = el.dataset.ends;
      var left = Number(ends || el.dataset.starts) - now;
      if (left <= 0 || left > 86400) return;
      el.textContent = interpolate(ends ? gettext("Ends in %s") : gettext("Starts in %s"), [duration(left)]);
    });
  }
  tick();
  setInterval(tick, 1000);
})();
