// "Remind me" on the item page (templates/seckill/remind.html). The page is everybody's: who is
// logged in, and their CSRF token, come from the nav's answer (static/js/nav.js), and whether
// their reminder is on from it too when it says (the item page's /seckill/shopperState), else
// from /reminders/<id>, asked once the section shows. The words come translated in the
// section's data-*.
(function () {
  var box = document.getElementById("remind");
  if (!box) return;
  var url = "/reminders/" + box.dataset.saleId;
  var button = document.getElementById("remind-button");
  var login = document.getElementById("remind-login");
  var said = document.getElementById("remind-status");
  var csrf = null, on = false, shopper = false, asked = false;

  function show(state) {
    on = state;
    button.setAttribute("aria-pressed", on ? "true" : "false");
    button.textContent = on ? box.dataset.labelOn : box.dataset.labelOff;
  }
  function say(text, kind) { said.textContent = text; said.className = "small " + (kind || ""); }

  // Once, and only for a logged-in shopper who sees the section: a sale that is on shows it only
  // while sold out, so the opening's crowd asks nothing here.
  function ask() {
    if (asked || !shopper || box.hidden) return;
    asked = true;
    fetch(url, { credentials: "same-origin", headers: { Accept: "application/json" } })
      .then(function (r) { return r.json(); })
      .then(function (answer) {
        if (answer.code !== 0) return;
        show(answer.data.on);
        login.hidden = true;
        button.hidden = false;
      })
      .catch(function () { asked = false; });
  }

  // The page is not loaded again at the opening: the box follows the sale's status as
  // static/js/seckill.js keeps it on #sale. Before the start, "the start" with the calendar;
  // once on, "a unit comes back", shown only while no unit is left (seckill.js refreshes the
  // stock box); gone once ended. Once on, "on" means a watch for a unit coming back, which a
  // reminder of the start is not (sales.reminders.services): the state is asked again.
  var sale = document.getElementById("sale");
  var title = document.getElementById("remind-title");
  var text = document.getElementById("remind-text");
  var calendar = document.getElementById("remind-calendar");
  var variant = box.dataset.status === "0" ? "start" : "back";
  box.dataset.saidOn = variant === "start" ? box.dataset.saidOnStart : box.dataset.saidOnBack;
  function follow() {
    var status = Number(sale ? sale.dataset.status : box.dataset.status);
    if (status >= 1 && variant === "start") {
      variant = "back";
      title.textContent = box.dataset.titleBack;
      text.textContent = box.dataset.textBack;
      box.dataset.saidOn = box.dataset.saidOnBack;
      if (calendar) calendar.hidden = true;
      said.textContent = "";
      if (shopper) { asked = false; button.hidden = true; login.hidden = true; }
    }
    var stock = document.getElementById("stock");
    var soldOut = stock && Number(stock.textContent) <= 0;
    // A shopper on a draw's waiting list is offered a unit that comes back (and texted): no
    // reminder of one back on sale for them (seckill.js marks #sale data-listed).
    var listed = sale && sale.dataset.listed === "1";
    box.hidden = status >= 2 || (status === 1 && (!soldOut || listed));
    ask();
  }
  follow();
  setInterval(follow, 2000);

  // After every deferred script: nav.js, which asks the nav's answer, comes after this one on the page.
  document.addEventListener("DOMContentLoaded", function () {
    (window.SeckillMe || Promise.reject(new Error("no /user/me")))
      .then(function (body) {
        if (!body.data || !body.data.nickname) return;
        csrf = body.data.csrfToken;
        shopper = true;
        // On the item page the nav's answer is /seckill/shopperState, which says whether the
        // reminder is on while the section may show: nothing to ask then.
        if (body.data.reminder) {
          asked = true;
          show(body.data.reminder.on);
          login.hidden = true;
          button.hidden = false;
          return;
        }
        ask();
      })
      .catch(function () {});
  });

  button.addEventListener("click", function () {
    button.disabled = true;
    fetch(url, {
      method: "POST",
      credentials: "same-origin",
      headers: { Accept: "application/json", "Content-Type": "application/x-www-form-urlencoded", "X-CSRFToken": csrf },
      body: "on=" + (on ? "0" : "1"),
    })
      .then(function (r) { return r.json(); })
      .then(function (answer) {
        if (answer.code === 0) {
          show(answer.data.on);
          say(on ? box.dataset.saidOn : box.dataset.saidOff, "ok");
        } else {
          say(answer.msg, "alert");
        }
      })
      .catch(function () { say(box.dataset.saidFailed, "alert"); })
      .then(function () { button.disabled = false; });
  });
})();
