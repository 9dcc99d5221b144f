// Item page: countdown -> buy -> captcha -> one-time path -> doSeckill -> poll the result.
// The page is everybody's (an edge keeps it): it shows the logged-out panel and carries every
// other one in a <template> (seckill/item/panels.py), which this script picks and fills. Two answers
// feed it: /seckill/saleState/<id>, the sale as data and the same for everybody (asked every
// 5 s), and /seckill/shopperState, where this shopper stands (the nav's answer as the page loads,
// then asked after a buy, when a deadline passes and when the tab is shown again; never on a
// timer). The panel
// follows the shopper's state, so a stock refresh never turns "Buy now" back on for a shopper
// who is queued or holds an order.
(function () {
  var gettext = window.gettext || function (s) { return s; };
  var ngettext = window.ngettext || function (one, many, n) { return n === 1 ? one : many; };
  var interpolate = window.interpolate || function (format, args) { return format.replace("%s", args[0]); };
  var time = window.SeckillTime, duration = time.duration;
  // The shopper's pages in this page's language: the nav carries their addresses (base.html).
  var navUrls = (document.getElementById("nav") || { dataset: {} }).dataset;
  function pageUrl(name, fallback) { return navUrls[name] || fallback; }
  var root = document.getElementById("sale");
  if (!root) return;
  var saleId = root.dataset.saleId;
  var panel = document.getElementById("panel");
  var countdown = document.getElementById("countdown");
  var startsLine = document.getElementById("starts-at");
  var announcer = document.getElementById("announce");
  var form = document.getElementById("captcha-form");
  var img = document.getElementById("captcha-img");
  var pictureHelp = document.getElementById("captcha-help");
  var answer = document.getElementById("captcha-answer");
  var refreshButton = document.getElementById("captcha-refresh");
  var audioButton = document.getElementById("captcha-audio");
  var player = document.getElementById("captcha-player");
  var audioHelp = document.getElementById("captcha-audio-help");
  var wait = document.getElementById("captcha-wait");
  var result = document.getElementById("result");
  // The page carries no CSRF token: the shopper's comes with their state.
  var csrf = null;
  var SALE_LIMIT = 500430, ALREADY_BOUGHT = 500501, ENTERED = 500507, SOLD_OUT = 500500, IN_WAITING_ROOM = 500700;
  // A sale whose waiting room is on answers a shopper with no pass where to wait: go there.
  function waitingRoom(body) {
    if (body && body.code === IN_WAITING_ROOM && body.data && body.data.waitingRoomUrl) {
      location.href = body.data.waitingRoomUrl;
      throw new Error("waiting room");
    }
    return body;
  }
  var drawBox = document.getElementById("draw-info");

  // The sale, as the page was rendered (maybe minutes ago), then as /seckill/saleState says.
  var status = Number(root.dataset.status);
  var stock = Number(root.dataset.stock);
  var startsAt = Number(root.dataset.startsAt) * 1000;
  var endsAt = Number(root.dataset.endsAt) * 1000;
  // A draw sale's entries (docs/draw.md): open from entriesOpen (ahead of the start, or at it)
  // until entriesClose, the draw. null for first come, first served.
  var entriesOpen = root.dataset.entriesOpens ? Number(root.dataset.entriesOpens) * 1000 : null;
  var entriesClose = root.dataset.entriesCloses ? Number(root.dataset.entriesCloses) * 1000 : null;
  var entriesState = null;
  // The shopper: "anonymous" until /seckill/shopperState answers (null there: logged out).
  var state = "anonymous", shopper = null;
  // buying: doSeckill asked and not answered yet. The shopper's state may say the order is
  // written (or the try failed) before that answer arrives: it says so then, and marks the try
  // settled so that the answer does not take the page back to "in the queue".
  var polling = false, buying = false, settled = false;

  // The shop's clock: every answer says its `now`, which the edge's copy may be `Age` seconds
  // older than. now + Age is never later than the shop's clock when the answer arrives, so the
  // largest such offset of the last few answers is the closest; the countdowns count by it.
  var offsets = [], offset = 0;
  function clockSeen(now, age) {
    if (typeof now !== "number") return;
    offsets.push((now + (age || 0)) * 1000 - Date.now());
    if (offsets.length > 6) offsets.shift();
    offset = Math.max.apply(null, offsets);
  }
  function shopNow() { return Date.now() + offset; }

  function say(text, kind) { result.textContent = text; result.className = "result " + (kind || ""); }
  // How a buy ended (placed, or refused): said, and the keyboard's focus moved there, since the
  // form it was in has gone; the panel's next button ("Pay now") follows it.
  function outcome(text, kind) { say(text, kind); result.focus(); }
  function focusNote(note) { if (note) { note.tabIndex = -1; note.focus(); } else result.focus(); }
  // Said once to screen readers; the ticking countdown itself is never announced.
  function announce(text) { announcer.textContent = text; }
  function answered(r) {
    if (r.status === 401) { location.href = pageUrl("loginUrl", "/user/index") + "?next=" + encodeURIComponent(location.pathname); throw new Error("login"); }
    return r.json().then(waitingRoom);
  }
  function json(url, options) {
    options = options || {};
    options.credentials = "same-origin";
    options.headers = Object.assign({ Accept: "application/json" }, options.headers || {});
    return fetch(url, options).then(answered);
  }
  function buyButton() { return document.getElementById("buy"); }
  function mayBuy() { return state === "none" || state === "failed" || state === "not_drawn"; }
  function entriesNow() {
    if (entriesOpen === null) return null;
    var now = shopNow();
    return now < entriesOpen ? "soon" : now < entriesClose ? "open" : "closed";
  }
  function statusNow() { var now = shopNow(); return now < startsAt ? 0 : now < endsAt ? 1 : 2; }
  function canBuy() { return (status === 1 || entriesNow() === "open") && stock > 0 && mayBuy(); }

  // --- the panel ---------------------------------------------------------------------------
  // Which of the page's panels (seckill/item/panels.py) shows: the same rules as panel.html's.
  function panelKey() {
    if (state === "anonymous") return status === 1 && stock <= 0 ? "anon:sold-out" : "anon";
    if (state === "queued" || state === "entered" || state === "ordered" || state === "paid") return state;
    var base = state === "failed" || state === "not_drawn" ? state : "none", entries = entriesNow(), action;
    if (status === 2) action = "ended";
    else if (entries === "open") action = "entries-open";
    else if (entries === "soon") action = "entries-soon";
    else if (status === 1 && stock <= 0) action = entries !== null ? "entries-closed" : "sold-out";
    else action = status === 1 ? "buy" : "buy-soon";
    return base + ":" + action;
  }
  function entryKey() {
    if (!shopper) return null;
    if (shopper.drawEntry) return shopper.drawEntry.won ? "won" : "lost";
    return shopper.userId && state === "entered" ? "id" : null;
  }
  function variant(kind, key) {
    var template = document.querySelector("template[data-" + kind + '-variant="' + key + '"]');
    return template ? template.content.cloneNode(true) : null;
  }
  // The slots of a panel, filled as text: nothing of an answer is ever read as markup.
  function fill(part, values) {
    part.querySelectorAll("[data-slot]").forEach(function (el) {
      var value = values[el.dataset.slot];
      if (value !== undefined && value !== null) el.textContent = String(value);
    });
  }
  // The panel is replaced only when it would say something new (its countdowns and the focus
  // on its button stay otherwise). The page shows the logged-out panel as it was rendered.
  var shownKey = panelKey(), shownFigures = "";
  function showPanel() {
    var key = panelKey(), entry = entryKey();
    var figures = JSON.stringify([shopper, entry]);
    if (key === shownKey && figures === shownFigures) return;
    var part = variant("panel", key);
    if (!part) return;
    var values = Object.assign({}, shopper || {}, shopper && shopper.drawEntry ? shopper.drawEntry : {});
    fill(part, values);
    part.querySelectorAll("[data-order-href]").forEach(function (a) { a.href = pageUrl("ordersUrl", "/orders/") + encodeURIComponent(shopper.orderNo); });
    part.querySelectorAll("[data-deadline]").forEach(function (el) {
      el.dataset.deadline = String(Math.round(shopper.payDeadline));
      el.dataset.now = String(Math.round(shopNow() / 1000));
    });
    part.querySelectorAll("[data-draw-at]").forEach(function (el) { el.dataset.drawAt = String(shopper.drawAt); });
    part.querySelectorAll("[data-waiting]").forEach(function (el) { el.hidden = !(shopper && shopper.waitingPlace) || listOver; });
    part.querySelectorAll("[data-waiting-over]").forEach(function (el) { el.hidden = !listOver; });
    part.querySelectorAll("[data-entry-slot]").forEach(function (slot) {
      var words = entry ? variant("entry", entry) : null;
      if (words) fill(words, values);
      if (words) slot.replaceWith(words); else slot.remove();
    });
    panel.replaceChildren(part);
    shownKey = key;
    shownFigures = figures;
    barHeight = undefined;
    time.tick();
    var button = buyButton();
    if (button && !form.hidden) button.disabled = true;  // the captcha is open for it
  }

  // Entries open or close: the panel's button and wording change with them.
  function entriesTick() {
    var now = entriesNow();
    if (now === null) return false;
    if (entriesState !== null && now !== entriesState) { entriesState = now; showPanel(); refreshSoon(); }
    entriesState = now;
    if (now === "soon") {
      countdown.textContent = interpolate(gettext("Entries open in %s"), [duration((entriesOpen - shopNow()) / 1000)]);
      barClock(gettext("Entries open in"), Math.max(0, Math.round((entriesOpen - shopNow()) / 1000)));
    } else if (now === "open") {
      countdown.textContent = interpolate(gettext("Entries close in %s"), [duration((entriesClose - shopNow()) / 1000)]);
      barClock(gettext("Entries close in"), Math.max(0, Math.round((entriesClose - shopNow()) / 1000)));
    } else return false;
    keepBarRoom();
    var button = buyButton();
    if (button && form.hidden) button.disabled = !canBuy();
    drawTick();
    return true;
  }

  // The countdown counts by the shop's clock, not the browser's.
  var saidMinute = false;
  function tick() {
    var was = status;
    status = statusNow();
    if (status !== was) {
      root.dataset.status = String(status); // what the page's other scripts follow (remind.js)
      showPanel();
    }
    if (entriesTick()) return;
    if (status === 0) {
      var left = Math.max(0, Math.round((startsAt - shopNow()) / 1000));
      countdown.textContent = interpolate(gettext("Starts in %s"), [duration(left)]);
      barClock(gettext("Starts in"), left);
      if (left <= 60 && !saidMinute) { saidMinute = true; announce(gettext("The sale starts in one minute.")); }
      keepBarRoom();
      return;
    }
    if (was === 0 && status >= 1) {
      if (entriesOpen === null && status === 1) announce(stock > 0 ? gettext("The sale has started: Buy now is on.") : gettext("Sold out"));
      refreshSoon();
    }
    if (startsLine) startsLine.hidden = true;
    if (was === 1 && status === 2) { announce(gettext("This sale has ended.")); showStock(); }
    if (status === 1) {
      var ending = (endsAt - shopNow()) / 1000;
      if (stock <= 0) countdown.textContent = entriesOpen !== null ? gettext("Entries closed") : gettext("Sold out for now");
      else countdown.textContent = interpolate(gettext("On sale now · ends in %s"), [duration(ending)]);
      barClock(stock <= 0 ? gettext("Sold out for now") : gettext("Ends in"), stock <= 0 ? null : ending);
    }
    if (status === 2) { countdown.textContent = gettext("This sale has ended."); barClock(gettext("Ended"), null); }
    var button = buyButton();
    if (button && form.hidden) button.disabled = !canBuy();
    drawTick();
    keepBarRoom();
  }
  // The phone's buy bar (seckill/buy_bar.html): a label and the time as HH / MM / SS blocks,
  // days before them; a label alone when there is no time to count. A shopper with an order
  // to pay reads the time left to pay beside "Pay now", whatever the sale's own clock says.
  function barClock(label, seconds) {
    var clock = document.getElementById("bar-clock");
    if (!clock) return;
    if (state === "ordered" && shopper && shopper.payDeadline) {
      label = gettext("Left to pay");
      seconds = Math.max(0, Math.round(shopper.payDeadline - shopNow() / 1000));
    }
    var blocks = clock.querySelectorAll(".clock-block, .clock-sep");
    clock.querySelector(".bar-label").textContent = label;
    blocks.forEach(function (el) { el.hidden = seconds === null; });
    var days = clock.querySelector(".bar-days");
    if (seconds === null) { days.textContent = ""; return; }
    var p = time.parts(seconds);
    days.textContent = p.days ? time.days(p.days) + " " : "";
    var digits = clock.querySelectorAll(".clock-block");
    [p.h, p.m, p.s].forEach(function (n, i) { digits[i].textContent = time.pad(n); });
  }
  // The page keeps room at its end as tall as the pinned bar (site.css), whose height its
  // words decide (two rows when its buttons do not fit beside the price).
  var barHeight = null;
  function keepBarRoom() {
    var bar = panel.querySelector(".buy-bar");
    var height = bar && getComputedStyle(bar).position === "fixed" ? bar.offsetHeight : null;
    if (height === barHeight) return;
    barHeight = height;
    if (height === null) document.documentElement.style.removeProperty("--bar-height");
    else document.documentElement.style.setProperty("--bar-height", height + "px");
  }
  // A draw sale's entrant (docs/draw.md): a countdown to the draw by the shop's clock, then
  // the shopper's state asked until it shows the outcome (queued, or not drawn).
  function drawTick() {
    var el = panel.querySelector("[data-draw-at]");
    if (!el || !el.dataset.drawAt) return;
    // The sale's draw instant as /seckill/saleState last said it (a merchant may move it).
    var drawAt = entriesClose !== null ? entriesClose / 1000 : Number(el.dataset.drawAt);
    var left = Math.max(0, Math.round(drawAt - shopNow() / 1000));
    el.textContent = left > 0 ? interpolate(gettext("Draw in %s"), [duration(left)]) : gettext("Drawing…");
    // While entries are open #countdown counts to their close, which is the draw: one
    // countdown on the page, not two saying the same.
    el.hidden = left > 0 && entriesNow() === "open";
    if (left === 0) awaitDraw();
  }
  // drawn: everybody's answer has said the draw is made. Until then an entrant's own state
  // cannot change, so the page asks everybody's answer (which an edge keeps), not its own.
  var drawAsks = 0, drawAsking = false, drawn = false;
  function awaitDraw() {
    if (drawAsking) return;
    drawAsking = true;
    // Once a second at first, then less often: the draw takes a moment to write. Entrants'
    // own questions are spread over two seconds, so they do not all reach the shop at once.
    var wait = Math.min(5000, 1000 * (1 + drawAsks)) + (drawn ? Math.random() * 2000 : 0);
    setTimeout(function () {
      (drawn ? askShopper() : refreshSale()).then(function () { drawAsking = false; drawAsks += 1; });
    }, wait);
  }

  // --- the sale, the same for everybody --------------------------------------------------
  function showStock(claimed) {
    var figure = document.getElementById("stock");
    if (figure) figure.textContent = String(stock);
    if (typeof claimed === "number") {
      var words = document.querySelector('#claimed [data-slot="claimed"]');
      if (words) words.textContent = String(claimed);
      var bar = document.getElementById("claimed-bar");
      if (bar) bar.value = claimed;
    }
    if (status === 2) document.querySelectorAll("#stock-box > *").forEach(function (el) { el.hidden = true; });
  }
  // A made draw's result, added to the draw box without a reload (seckill/draw_result.html).
  var saleSeen = false;
  function showDraw(draw) {
    if (!draw || !draw.drawn || !drawBox || document.getElementById("seed")) return;
    var template = document.getElementById("draw-result");
    if (!template) return;
    var part = template.content.cloneNode(true);
    fill(part, { units: draw.units, entrants: draw.entrants, seed: draw.seed, winners: (draw.winnerIds || []).join(", ") });
    var winners = part.querySelector("#draw-winners");
    if (winners && !(draw.winnerIds || []).length) winners.remove();
    else if (winners && draw.winnerCount > draw.winnerIds.length) {
      var more = draw.winnerCount - draw.winnerIds.length;
      winners.appendChild(document.createTextNode(" " + interpolate(ngettext("and %s more", "and %s more", more), [more])));
    }
    drawBox.appendChild(part);
    if (saleSeen) announce(gettext("The draw is made: the seed and the winners are published."));
  }
  // Every 5 s (and at the opening, a moment after it): the sale's status, stock, window and
  // draw. The panel changes only when what picks it does.
  function refreshSale() {
    return fetch("/seckill/saleState/" + saleId, { credentials: "same-origin", headers: { Accept: "application/json" } })
      .then(function (r) {
        var age = Number(r.headers.get("Age")) || 0;
        return r.json().then(function (body) { return { body: body, age: age }; });
      })
      .then(function (got) {
        if (got.body.code !== 0) return;
        var data = got.body.data, wasInStock = stock > 0, before = status;
        clockSeen(data.now, got.age);
        startsAt = data.startsAt * 1000;
        endsAt = data.endsAt * 1000;
        if (data.entries) { entriesOpen = data.entries.opensAt * 1000; entriesClose = data.entries.closesAt * 1000; }
        stock = data.stockCount;
        // The status itself changes in tick(), which says so.
        if (statusNow() === 1 && before === 1 && wasInStock && stock <= 0) announce(entriesOpen !== null ? gettext("Entries closed") : gettext("Sold out"));
        showStock(data.claimed);
        showDraw(data.draw);
        if (data.draw && data.draw.drawn && !drawn) { drawn = true; drawAsks = 0; }
        saleSeen = true;
        showPanel();
        tick();
      }).catch(function () {});
  }
  // A short random wait, so that pages counting down together do not all ask in one millisecond.
  function refreshSoon() { setTimeout(refreshSale, Math.random() * 1500); }
  setInterval(refreshSale, 5000);

  // --- the shopper ------------------------------------------------------------------------
  var askedAt = 0, deadlineTimer = null;
  function askShopper() {
    askedAt = Date.now();
    return json("/seckill/shopperState?goodsId=" + saleId).then(shopperSeen).catch(function () {});
  }
  function shopperSeen(body) {
    if (body.code !== 0) return;
    var data = body.data, before = state;
    clockSeen(data.now, 0);
    if (data.csrfToken) csrf = data.csrfToken;
    shopper = data.shopper;
    state = shopper ? shopper.state : "anonymous";
    showPanel();
    if (state !== before) stateChanged(before);
    if (!mayBuy()) form.hidden = true;
    deadlineWatch();
    listWatch();
    tick();
  }
  // Asked again when it changes by itself: the pay deadline passes (the order lapses).
  function deadlineWatch() {
    clearTimeout(deadlineTimer);
    if (state !== "ordered" || !shopper.payDeadline) return;
    var wait = shopper.payDeadline * 1000 - shopNow() + 1000;
    if (wait < 2147483647) deadlineTimer = setTimeout(askShopper, Math.max(1000, wait));
  }
  // A shopper on a made draw's waiting list: their place from /seckill/waitingList/<id>, which
  // the fast path answers from Redis, every refreshSeconds (the server's, never faster) while
  // they wait. When it is no longer "waiting" their own state is asked once: "Pay now" for an
  // offer, the panel without a place for a turn gone by; "sold out" ends the wait here.
  var listTimer = null, listEvery = 5000, listOver = false;
  function listWatch() {
    var waits = state === "not_drawn" && !!(shopper && shopper.waitingPlace) && !listOver;
    root.dataset.listed = waits ? "1" : "";  // remind.js: a unit that comes back is offered, not put on sale
    if (!waits) { clearTimeout(listTimer); listTimer = null; return; }
    if (listTimer === null) listTimer = setTimeout(askList, listEvery);
  }
  function askList() {
    fetch("/seckill/waitingList/" + saleId, { credentials: "same-origin", headers: { Accept: "application/json" } })
      .then(function (r) { return r.ok ? r.json() : null; })
      .then(function (body) {
        listTimer = null;
        if (!body || body.code !== 0 || state !== "not_drawn" || !shopper) return listWatch();
        var d = body.data;
        listEvery = 1000 * Math.max(1, Number(d.refreshSeconds) || 5);
        if (d.state === "waiting") {
          if (d.position !== shopper.waitingPlace) {
            shopper.waitingPlace = d.position;
            panel.querySelectorAll('[data-slot="waitingPlace"]').forEach(function (el) { el.textContent = String(d.position); });
            shownFigures = JSON.stringify([shopper, entryKey()]);
            announce(interpolate(gettext("You are now #%s on the waiting list."), [d.position]));
          }
          return listWatch();
        }
        if (d.state === "sold_out") {
          listOver = true;
          shopper.waitingPlace = null;
          shownKey = null;  // shown again: the place goes, the end of the wait is said
          showPanel();
          announce(gettext("Sold out") + " · " + gettext("Every unit is paid for, so none can come back: the wait is over."));
          return listWatch();
        }
        return askShopper();
      })
      .catch(function () { listTimer = null; listWatch(); });
  }
  // A tab shown again may have missed a change made elsewhere (a payment, another device).
  document.addEventListener("visibilitychange", function () {
    if (document.visibilityState === "visible" && Date.now() - askedAt > 30000) askShopper();
  });
  // As the page loads, the nav's answer is this page's /seckill/shopperState (base.html's
  // me_url block): its state is taken, not asked again. Asked after it otherwise, so both
  // answers' CSRF tokens are of the one cookie it set.
  refreshSale();
  askedAt = Date.now();
  (window.SeckillMe || Promise.resolve()).then(function (body) {
    if (body && body.code === 0 && body.data && "shopper" in body.data) shopperSeen(body);
    else return askShopper();
  }).catch(askShopper);
  tick();
  setInterval(tick, 1000);

  function stateChanged(before) {
    if (state === "queued") startPolling();
    var waited = before === "queued" || buying;
    if (buying && (state === "ordered" || state === "failed")) settled = true;
    if (state === "ordered" && waited) outcome(gettext("Got it! Your order is placed: pay before the time below runs out."), "ok");
    if (state === "paid") say("");
    // Lost, or not drawn: the panel's note says it, in one sentence; the focus goes there.
    if (state === "failed" && waited) { say(""); focusNote(document.getElementById("lost-note")); }
    if (state === "queued" && before === "entered") say(gettext("You were drawn! Your order is being written…"), "ok");
    if (state === "not_drawn") { say(""); if (before === "entered") focusNote(document.getElementById("draw-not-drawn")); }
  }

  // --- the captcha -----------------------------------------------------------------------
  var waitTimer = null;
  function limited(body) {
    // Over the per-sale limit: say so and how long, count down, then offer a new sum.
    var seconds = (body.data && body.data.retryAfter) || 60;
    refreshButton.disabled = audioButton.disabled = true;
    clearInterval(waitTimer);
    function show() {
      wait.hidden = false;
      wait.textContent = interpolate(gettext("Too many tries for this sale. You can get a new sum in %s s."), [seconds]);
      if (seconds <= 0) {
        clearInterval(waitTimer);
        wait.hidden = true;
        refreshButton.disabled = audioButton.disabled = false;
        challenge();
      }
      seconds -= 1;
    }
    show();
    waitTimer = setInterval(show, 1000);
  }
  function fetchChallenge(url) {
    return fetch(url + "?goodsId=" + saleId + "&t=" + Date.now(), { credentials: "same-origin" }).then(function (r) {
      if (r.status === 401) { location.href = pageUrl("loginUrl", "/user/index") + "?next=" + encodeURIComponent(location.pathname); throw new Error("login"); }
      var type = r.headers.get("Content-Type") || "";
      if (type.indexOf("application/json") === 0) return r.json().then(function (body) { throw waitingRoom(body); });
      return r.blob();
    });
  }
  // spoken: the last challenge was the audio one, whose answer a wrong try used up.
  var spoken = false;
  function newCaptcha() {
    spoken = false;
    answer.value = "";
    return fetchChallenge("/seckill/verifyCode").then(function (blob) {
      wait.hidden = true;
      if (img.src) URL.revokeObjectURL(img.src);
      img.src = URL.createObjectURL(blob);
    }).catch(function (body) {
      if (body && body.code === SALE_LIMIT) limited(body);
      else if (body && body.msg) say(body.msg, "err");
    });
  }
  // The spoken sum replaces the picture and its words while it is on (its answer replaced the
  // picture's on the server); switching back draws a new picture.
  var listening = false, listenLabel = audioButton.textContent, refreshLabel = refreshButton.textContent;
  function hearing(on) {
    listening = on;
    img.hidden = pictureHelp.hidden = on;
    audioHelp.hidden = player.hidden = !on;
    if (!on) player.pause();
    audioButton.textContent = on ? audioButton.dataset.pictureLabel : listenLabel;
    refreshButton.textContent = on ? gettext("New digits") : refreshLabel;
    answer.setAttribute("aria-describedby", on ? "captcha-audio-help" : "captcha-help");
  }
  function challenge() { return listening ? listen() : newCaptcha(); }
  function toggleAudio() {
    if (!listening) return listen();
    hearing(false);
    return newCaptcha().then(function () { answer.focus(); });
  }
  function listen() {
    return fetchChallenge("/seckill/verifyAudio").then(function (blob) {
      spoken = true;
      answer.value = "";
      hearing(true);
      if (player.src) URL.revokeObjectURL(player.src);
      player.src = URL.createObjectURL(blob);
      player.play().catch(function () {});  // a browser may refuse to start sound by itself
      answer.focus();
    }).catch(function (body) {
      if (body && body.code === SALE_LIMIT) limited(body);
      else if (body && body.msg) say(body.msg, "err");
    });
  }
  panel.addEventListener("click", function (event) {
    if (event.target.id !== "buy") return;
    event.target.disabled = true;  // while the captcha is open: another press would draw another
    form.hidden = false;
    say("");
    hearing(false);
    newCaptcha();
    answer.focus();
  });
  refreshButton.addEventListener("click", challenge);
  audioButton.addEventListener("click", toggleAudio);

  form.addEventListener("submit", function (event) {
    event.preventDefault();
    say(gettext("Checking…"));
    json("/seckill/path?goodsId=" + saleId + "&verifyCode=" + encodeURIComponent(answer.value.trim()))
      .then(function (body) {
        if (body.code === SALE_LIMIT) { say(body.msg, "err"); limited(body); return; }
        if (body.code !== 0 && spoken) {
          // A listener gets new digits when they ask, not a clip that starts over their screen reader.
          player.pause();
          player.removeAttribute("src");
          player.hidden = true;
          answer.value = "";
          say(body.msg + " " + gettext("Press “New digits” to hear new ones."), "err");
          refreshButton.focus();
          return;
        }
        if (body.code !== 0) { say(body.msg, "err"); challenge(); answer.focus(); return; }
        buying = true;
        settled = false;
        return json("/seckill/" + body.data + "/doSeckill", {
          method: "POST",
          headers: { "Content-Type": "application/x-www-form-urlencoded", "X-CSRFToken": csrf },
          body: "goodsId=" + encodeURIComponent(saleId),
        }).then(function (res) {
          form.hidden = true;
          player.pause();
          if (res.code === 0) return taken();
          buying = false;
          if (res.code === ALREADY_BOUGHT) {
            outcome(gettext("You already have an order for this item: see it below."), "err");
            return askShopper();
          }
          // The panel (refreshed now) says it, with the draw's countdown: said once, to screen
          // readers, and the focus goes to it.
          if (res.code === ENTERED) {
            say(""); announce(res.msg); state = "entered";
            return askShopper().then(function () { focusNote(document.getElementById("draw-entered")); });
          }
          // Refused (sold out, not started, a stale path...): the shopper's own state is as it
          // was, and everybody's answer says what changed. Sold out in a sentence, not the code's word.
          outcome(res.code === SOLD_OUT ? gettext("Sorry, the last unit has gone. If one comes back, the button turns on again.") : res.msg, "err");
          return refreshSale();
        });
      })
      .catch(function (e) { buying = false; if (e.message !== "login") say(gettext("Network problem, please try again."), "err"); });
  });

  // The gate took the buy. Its answer may come after the order is written (a slow network): the
  // result poll, which the edge answers from the ticket the buy left, is asked at once, so the
  // page says "placed" once, never "in the queue" first. The shopper's own state is asked only
  // when the result is in, for the panel's "Pay now".
  function taken() {
    return json("/seckill/result?goodsId=" + saleId).then(function (body) {
      return body.code === 0 ? plan.state(body.data, 0) : "waiting";
    }, function (e) { if (e.message === "login") throw e; return "waiting"; }).then(function (first) {
      buying = false;
      if (settled || (state !== "none" && state !== "queued")) return;
      if (first === "ordered" || first === "failed") { state = "queued"; show(first, 0); return; }
      outcome(gettext("You are in the queue…"), "wait");
      if (state !== "queued") { state = "queued"; showPanel(); }
      startPolling();
    });
  }

  // Poll with backoff (static/js/poll.js). "Queued" never turns into "sold out" here: only
  // the server's -1 says the order failed; a long wait says "still processing" instead.
  var plan = window.SeckillPoll;
  function startPolling() { if (!polling) { polling = true; poll(0); } }
  function poll(attempt) {
    setTimeout(function () {
      json("/seckill/result?goodsId=" + saleId).then(function (body) {
        if (body.code !== 0) { polling = false; say(body.msg, "err"); return; }
        show(plan.state(body.data, attempt), attempt);
      }).catch(function (e) { if (e.message !== "login") show(plan.state(null, attempt), attempt); });
    }, plan.delay(attempt));
  }
  function show(pollState, attempt) {
    if (pollState === "ordered" || pollState === "failed") {
      polling = false;
      if (pollState === "failed") say("");  // the panel's note says it, once the state is asked
      refreshSale();  // the stock the order took, or a unit come back
      askShopper();  // the panel: "Pay now" with the deadline, or the buy button again
    } else if (pollState === "waiting") {
      poll(attempt + 1);
    } else {
      say(gettext("Still processing your order. It will appear on "), "wait");
      var link = document.createElement("a");
      link.href = pageUrl("ordersUrl", "/orders/");
      link.textContent = gettext("your orders page");
      result.appendChild(link);
      result.appendChild(document.createTextNode(pollState === "processing" ? gettext("; this page keeps checking.") : "."));
      if (pollState === "processing") poll(attempt + 1); else polling = false;
    }
  }
})();
