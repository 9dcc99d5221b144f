// "Time left to pay": count down to each [data-deadline] (epoch seconds), then reload once
// so the page shows the order as expired.
(function () {
  var items = document.querySelectorAll("[data-deadline]");
  if (!items.length) return;
  function tick() {
    var now = Date.now() / 1000;
    items.forEach(function (el) {
      var left = Math.max(0, Math.round(Number(el.dataset.deadline) - now));
      el.textContent = Math.floor(left / 60) + "m " + String(left % 60).padStart(2, "0") + "s";
      if (left === 0 && !el.dataset.done) { el.dataset.done = "1"; setTimeout(function () { location.reload(); }, 3000); }
    });
  }
  tick();
  setInterval(tick, 1000);
})();
