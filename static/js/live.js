// The merchant's live sale view: fetch the figures every 2 s while the sale runs, draw bars
// (orders per second) and a line (cumulative orders) as plain SVG.
(function () {
  var root = document.getElementById("live");
  var svg = document.getElementById("chart");
  var NS = "http://www.w3.org/2000/svg", W = 900, H = 260, PAD = 28;
  var STATUS = ["not started", "on sale", "ended"];

  function el(name, attrs) {
    var node = document.createElementNS(NS, name);
    Object.keys(attrs).forEach(function (k) { node.setAttribute(k, attrs[k]); });
    return node;
  }
  function set(id, value) { document.getElementById(id).textContent = value === null ? "–" : value; }

  function draw(data) {
    while (svg.firstChild) svg.removeChild(svg.firstChild);
    var series = data.series;
    var start = data.start, end = Math.min(data.end, Math.max(Date.now() / 1000, start + 60));
    if (series.length) end = Math.max(end, series[series.length - 1].t + 1);
    var total = series.length ? series[series.length - 1].cumulative : 0;
    var peak = series.reduce(function (m, p) { return Math.max(m, p.orders); }, 1);
    function x(t) { return PAD + (W - 2 * PAD) * (t - start) / Math.max(1, end - start); }
    svg.appendChild(el("line", { x1: PAD, y1: H - PAD, x2: W - PAD, y2: H - PAD, stroke: "#999" }));
    var barWidth = Math.max(2, (W - 2 * PAD) / Math.max(60, end - start));
    var points = [PAD + "," + (H - PAD)], y = H - PAD;
    series.forEach(function (p) {
      var height = (H - 2 * PAD) * p.orders / peak;
      svg.appendChild(el("rect", { x: x(p.t), y: H - PAD - height, width: barWidth, height: height, fill: "#79aec8" }));
      points.push(x(p.t) + "," + y);  // a step: flat until this second's orders land
      y = H - PAD - (H - 2 * PAD) * p.cumulative / Math.max(1, total);
      points.push(x(p.t) + "," + y);
    });
    points.push(x(end) + "," + y);
    svg.appendChild(el("polyline", { points: points.join(" "), fill: "none", stroke: "#e4393c", "stroke-width": 2 }));
    var label = el("text", { x: PAD, y: 16, "font-size": 12, fill: "#666" });
    label.textContent = total + " orders · peak " + peak + "/s";
    svg.appendChild(label);
  }

  function refresh() {
    fetch(root.dataset.url, { credentials: "same-origin" })
      .then(function (r) { return r.json(); })
      .then(function (data) {
        set("stock-redis", data.stockRedis); set("stock-db", data.stockDatabase); set("in-flight", data.inFlight);
        set("unpaid", data.unpaid); set("paid", data.paid); set("cancelled", data.cancelled);
        set("refused-captcha", data.refusedCaptcha); set("refused-path", data.refusedPath);
        document.getElementById("live-status").textContent = STATUS[data.status] + " · " + new Date().toLocaleTimeString();
        draw(data);
        if (data.status !== 2) setTimeout(refresh, 2000);
      })
      .catch(function () { setTimeout(refresh, 5000); });
  }
  refresh();
})();
