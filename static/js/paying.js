// The waiting page (orders/paying.html): while the order is unpaid, poll it until the payment
// service's word has landed (paid, or a refund), then show the page again with it. Every 2 s
// for a minute, then every 10 s; the "check now" button asks the shop to ask the service.
(function () {
  var root = document.getElementById("paying");
  if (!root || !document.getElementById("paying-check")) return;
  var started = Date.now();
  function poll() {
    fetch(root.dataset.orderUrl, { headers: { Accept: "application/json" } })
      .then(function (response) { return response.json(); })
      .then(function (body) {
        var payment = body.data && body.data.payment;
        if (payment && (payment.status !== "unpaid" || payment.refund)) {
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
