// The merchant's live sale view: fetch the figures every 2 s while the sale runs and draw, as
// plain SVG, bars (orders per interval) and a line (orders so far) over a time axis in the
// shop's time zone, each with its scale. The clock is the server's (the figures' serverTime),
// shown in the shop's zone: a merchant's laptop set to another zone or a wrong time shows
// what the shop sees. Every word comes from the page (#live-words), in the merchant's language.
(function () {
  var root = document.getElementById("live");
  var svg = document.getElementById("chart");
  var words = JSON.parse(document.getElementById("live-words").textContent);
  var zone = root.dataset.zone, lang = root.dataset.lang;
  var NS = "http://www.w3.org/2000/svg", W = 960, H = 320;
  var M = { left: 56, right: 64, top: 28, bottom: 40 };
  var BUCKETS = [1, 2, 5, 10, 15, 30, 60, 120, 300, 600, 900, 1800, 3600];
  var STEPS = [1, 2, 5, 10, 15, 30, 60, 120, 300, 600, 900, 1800, 3600, 7200, 10800, 21600, 43200, 86400];

  function formatter(options) {
    try {
      return new Intl.DateTimeFormat(lang, Object.assign({ timeZone: zone, hourCycle: "h23" }, options));
    } catch (e) {  // an unknown zone name: the browser's zone rather than nothing
      return new Intl.DateTimeFormat(lang, Object.assign({ hourCycle: "h23" }, options));
    }
  }
  var clock = formatter({ hour: "2-digit", minute: "2-digit", second: "2-digit" });
  var minutes = formatter({ hour: "2-digit", minute: "2-digit" });
  var days = formatter({ month: "2-digit", day: "2-digit", hour: "2-digit", minute: "2-digit" });
  var amount = new Intl.NumberFormat(lang, { minimumFractionDigits: 2, maximumFractionDigits: 2 });

  function el(name, attrs, text) {
    var node = document.createElementNS(NS, name);
    Object.keys(attrs).forEach(function (k) { node.setAttribute(k, attrs[k]); });
    if (text !== undefined) node.textContent = text;
    svg.appendChild(node);
    return node;
  }
  function set(id, value) { document.getElementById(id).textContent = value === null ? "–" : value; }

  // A "nice" scale from 0 to at least `max`: about five steps of 1, 2 or 5 times a power of ten.
  function scale(max) {
    max = Math.max(1, max);
    var raw = max / 5, power = Math.pow(10, Math.floor(Math.log10(raw))), step = power;
    [1, 2, 5, 10].some(function (m) { step = m * power; return step >= raw; });
    step = Math.max(1, step);
    var ticks = [];
    for (var v = 0; v <= max + step - 1e-9; v += step) ticks.push(v);
    return { top: ticks[ticks.length - 1], ticks: ticks };
  }

  function draw(data) {
    while (svg.firstChild) svg.removeChild(svg.firstChild);
    var x0 = M.left, x1 = W - M.right, y0 = H - M.bottom, y1 = M.top;
    var start = data.start, now = data.serverTime;
    if (now < start) {
      el("text", { x: W / 2, y: H / 2, "text-anchor": "middle" }, words.notStarted);
      return;
    }
    var end = Math.min(data.end, Math.max(now, start + 60));
    var span = Math.max(1, end - start);
    var bucket = BUCKETS.filter(function (b) { return span / b <= 120; })[0] || 3600;
    document.getElementById("legend-bars").textContent = words.buckets[String(bucket)];

    var bars = {}, total = 0;
    data.series.forEach(function (p) {
      var b = Math.floor((p.t - start) / bucket);
      bars[b] = (bars[b] || 0) + p.orders;
    });
    var peak = Object.keys(bars).reduce(function (m, k) { return Math.max(m, bars[k]); }, 0);
    total = data.series.length ? data.series[data.series.length - 1].cumulative : 0;
    var left = scale(peak), right = scale(total);
    function x(t) { return x0 + (x1 - x0) * (t - start) / span; }
    function yl(v) { return y0 - (y0 - y1) * v / left.top; }
    function yr(v) { return y0 - (y0 - y1) * v / right.top; }

    // Scales: grid lines and numbers on the left (per interval), numbers on the right (so far).
    left.ticks.forEach(function (v) {
      el("line", { x1: x0, x2: x1, y1: yl(v), y2: yl(v), class: "grid" });
      el("text", { x: x0 - 6, y: yl(v) + 4, "text-anchor": "end", class: "tick-left" }, String(v));
    });
    right.ticks.forEach(function (v) {
      el("text", { x: x1 + 6, y: yr(v) + 4, "text-anchor": "start", class: "tick-right" }, String(v));
    });
    el("text", { x: x0 - 6, y: 14, "text-anchor": "start", class: "axis-title" }, words.buckets[String(bucket)]);
    el("text", { x: x1 + 6, y: 14, "text-anchor": "end", class: "axis-title" }, words.soFar);

    // The time axis: round times of the shop's clock, about eight of them.
    var step = STEPS.filter(function (s) { return span / s <= 8; })[0] || 86400;
    var label = span > 86400 ? days : (step < 60 ? clock : minutes);
    for (var t = Math.ceil(start / step) * step; t <= end; t += step) {
      el("line", { x1: x(t), x2: x(t), y1: y0, y2: y0 + 5, class: "axis" });
      el("text", { x: x(t), y: y0 + 18, "text-anchor": "middle", class: "tick-x" }, label.format(new Date(t * 1000)));
    }
    el("text", { x: (x0 + x1) / 2, y: H - 4, "text-anchor": "middle", class: "axis-title" }, words.time);
    el("line", { x1: x0, x2: x1, y1: y0, y2: y0, class: "axis" });
    el("line", { x1: x0, x2: x0, y1: y0, y2: y1, class: "axis" });
    el("line", { x1: x1, x2: x1, y1: y0, y2: y1, class: "axis" });

    var width = Math.max(1, (x1 - x0) * bucket / span - 1);
    Object.keys(bars).forEach(function (b) {
      var top = yl(bars[b]);
      el("rect", { x: x(start + b * bucket), y: top, width: width, height: y0 - top, fill: "#79aec8" });
    });
    var points = [x0 + "," + y0], y = y0;
    data.series.forEach(function (p) {
      points.push(x(p.t) + "," + y);  // a step: flat until this second's orders land
      y = yr(p.cumulative);
      points.push(x(p.t) + "," + y);
    });
    points.push(x(end) + "," + y);
    el("polyline", { points: points.join(" "), fill: "none", stroke: "#e4393c", "stroke-width": 2 });
    if (!total) el("text", { x: (x0 + x1) / 2, y: (y0 + y1) / 2, "text-anchor": "middle" }, words.noOrders);
  }

  function refresh() {
    fetch(root.dataset.url, { credentials: "same-origin" })
      .then(function (r) { return r.json(); })
      .then(function (data) {
        set("stock-left", data.stockRedis === null ? data.stockDatabase : data.stockRedis);
        set("in-flight", data.inFlight);
        set("unpaid", data.unpaid); set("paid", data.paid); set("cancelled", data.cancelled);
        set("revenue", "¥" + amount.format(Number(data.revenue)));
        set("refused-captcha", data.refusedCaptcha); set("refused-path", data.refusedPath);
        if (data.draw && document.getElementById("entrants")) {
          // A draw sale (docs/draw.md): entrants, the last full second's entries, the outcome.
          var now = Math.floor(data.serverTime) - 1, rate = 0;
          data.draw.entriesPerSecond.forEach(function (p) { if (p.t === now) rate = p.entries; });
          set("entrants", data.draw.entrants); set("entry-rate", rate); set("draw-outcome", data.draw.outcome);
        }
        // Cards other parts of the shop add (orders.selectors.sale_live_cards_add), by element id.
        Object.keys(data.cards || {}).forEach(function (id) {
          if (document.getElementById(id)) set(id, data.cards[id]);
        });
        set("sale-status", words.status[data.status]);
        set("server-clock", clock.format(new Date(data.serverTime * 1000)));
        draw(data);
        if (data.status !== 2) setTimeout(refresh, 2000);
      })
      .catch(function () { setTimeout(refresh, 5000); });
  }
  refresh();
})();
