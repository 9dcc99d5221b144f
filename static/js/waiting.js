// The waiting room, seen by a shopper (docs/waiting-room.md): the waiting page asks for its
// status every few seconds and says where the shopper stands, sends them to the item page once
// admitted (the answer carried their pass) and stops when the stock is gone. On an item page
// whose sale has a room, one ask joins the shopper and shows the way to the waiting page.
(function () {
  "use strict";
  function status(url) {
    return fetch(url, { credentials: "same-origin", headers: { Accept: "application/json" } })
      .then(function (r) { return r.ok ? r.json() : null; })
      .catch(function () { return null; });
  }

  var room = document.getElementById("waiting-room");
  if (room) {
    var now = document.getElementById("waiting-now");
    var head = document.getElementById("waiting-head"), tail = document.getElementById("waiting-tail");
    var said = "";
    var say = function (text, alert) {
      if (text === said) return;  // aria-live: said again only when it changes
      said = text;
      var p = document.createElement("p");
      if (alert) p.className = "alert";
      p.textContent = text;
      now.replaceChildren(p);
    };
    var ask = function () {
      status(room.dataset.statusUrl).then(function (body) {
        var again = true;
        if (body && body.code === 0) {
          var d = body.data;
          head.textContent = "#" + d.head;
          tail.textContent = String(d.tail);
          if (d.state === "admitted" || d.state === "off") {
            say(gettext("It is your turn: taking you to the item…"));
            location.href = room.dataset.itemUrl;
            return;
          }
          if (d.state === "sold_out") { say(gettext("Sold out") + " · " + gettext("Every unit is taken: the wait is over."), true); again = false; }
          else if (d.state === "ended") { say(gettext("This sale has ended."), true); again = false; }
          else if (d.state === "expired") { say(gettext("Your turn to buy has ended."), true); again = false; }
          else if (d.state === "waiting" && d.position) {
            var text = interpolate(gettext("You are #%(position)s in line"), { position: d.position }, true);
            // Each tail carries its own punctuation: Chinese writes "，" and "。", not ", " and ".".
            if (d.etaSeconds === null) text += pgettext("end of a sentence", ".") + " " + gettext("Nobody is being let in just now: your place is kept.");
            else if (d.etaSeconds < 60) text += gettext(", it is almost your turn.");
            else text += interpolate(gettext(", about %(minutes)s min."), { minutes: Math.ceil(d.etaSeconds / 60) }, true);
            say(text);
          }
          room.dataset.state = d.state;
        }
        // The server says when to ask again: sooner than usual as the shopper's turn nears.
        var every = body && body.code === 0 ? Number(body.data.refreshSeconds) : 0;
        if (again) setTimeout(ask, 1000 * Math.max(1, every || Number(room.dataset.refresh) || 5));
      });
    };
    if (room.dataset.state !== "sold_out" && room.dataset.state !== "ended" && room.dataset.state !== "expired") {
      setTimeout(ask, 1000 * Number(room.dataset.refresh || 5));
    }
  }

  var sale = document.getElementById("sale");
  var note = document.getElementById("waiting-room-note");
  if (sale && note && sale.dataset.waitingRoom) {
    status("/waiting-room/" + sale.dataset.saleId + "/status").then(function (body) {
      if (!body || body.code !== 0) return;
      var state = body.data.state;
      if (state === "waiting" || state === "prequeue" || state === "closed") note.hidden = false;
    });
  }
})();
