// The waiting page (orders/paying.html): while the order is unpaid, poll it and show the page
// again once its state differs from the one shown (data-state): paid, a refund, or a payment
// that did not go through (the newest attempt failed) — or a failed one paid after all. Every
// 2 s for a minute, then every 10 s; the "check now" button asks the shop to ask the service.
(function () {
  var root = document.getElementById("paying");
  if (!root || !document.getElementById("paying-check")) return;
  var started = Date.now();
  function stateOf(payment) {
    if (payment.status !== "unpaid" || payment.refund) return "settled";
    return payment.failure ? "failed" : "waiting";
  }
  function poll() {
    fetch(root.dataset.orderUrl, { headers: { Accept: "application/json" } })
      .then(function (response) { return response.json(); })
      .then(function (body) {
        var payment = body.data && body.data.payment;
        if (payment && stateOf(payment) !== root.dataset.state) {
          window.location.reload();
          return;
        }
        schedule();
      })
      .catch(schedule);
  }
  function schedule() { setTimeout(poll, Date.now() - started < 60000 ? 2000 : 10000); }
  schedule();
})();
