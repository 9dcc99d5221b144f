// Item page: countdown -> buy -> captcha -> one-time path -> doSeckill -> poll the result.
// Where the shopper stands (not bought / queued / ordered / paid / failed) comes from the
// server: the page renders it, and /seckill/state re-renders the panel when it changes, so a
// stock refresh never turns "Buy now" back on for a shopper who is queued or holds an order.
(function () {
  var gettext = window.gettext || function (s) { return s; };
  var interpolate = window.interpolate || function (format, args) { return format.replace("%s", args[0]); };
  var time = window.SeckillTime, duration = time.duration;
  var root = document.getElementById("sale");
  if (!root) return;
  var saleId = root.dataset.saleId;
  var panel = document.getElementById("panel");
  var stockBox = document.getElementById("stock-box");
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
  // The page is everybody's (an edge may serve it): the shopper's CSRF token comes with their
  // state from /seckill/state, which is asked for as soon as the page loads.
  var csrf = null;
  var SALE_LIMIT = 500430, ALREADY_BOUGHT = 500501, ENTERED = 500507;
  var drawBox = document.getElementById("draw-info");
  var lastDraw = null;

  var status = Number(root.dataset.status);
  var stock = Number(root.dataset.stock);
  var state = root.dataset.shopperState;
  // The page may be minutes old (an edge keeps it), so it carries the window's instants; the
  // first refresh, as the page loads, replaces them with the server's remaining seconds.
  var startsAt = Number(root.dataset.startsAt) * 1000;
  var endsAt = status === 1 ? Number(root.dataset.endsAt) * 1000 : null;
  // A draw sale's entries (docs/draw.md): open from entriesOpen (ahead of the start, or at it)
  // until entriesClose, the draw. null for first come, first served.
  var entriesOpen = root.dataset.entriesOpens ? Number(root.dataset.entriesOpens) * 1000 : null;
  var entriesClose = root.dataset.entriesCloses ? Number(root.dataset.entriesCloses) * 1000 : null;
  var entriesState = null;
  // buying: doSeckill asked and not answered yet. The page's own refresh may find the order
  // written (or the try failed) before that answer arrives: it says so then, and marks the try
  // settled so that the answer does not take the page back to "in the queue".
  var lastPanel = null, lastStock = null, polling = false, buying = false, settled = false;

  function say(text, kind) { result.textContent = text; result.className = "result " + (kind || ""); }
  // How a buy ended (placed, or refused): said, and the keyboard's focus moved there, since the
  // form it was in has gone; the panel's next button ("Pay now") follows it.
  function outcome(text, kind) { say(text, kind); result.focus(); }
  function focusNote(note) { if (note) { note.tabIndex = -1; note.focus(); } else result.focus(); }
  // Said once to screen readers; the ticking countdown itself is never announced.
  function announce(text) { announcer.textContent = text; }
  function json(url, options) {
    options = options || {};
    options.credentials = "same-origin";
    options.headers = Object.assign({ Accept: "application/json" }, options.headers || {});
    return fetch(url, options).then(function (r) {
      if (r.status === 401) { location.href = "/user/index?next=" + encodeURIComponent(location.pathname); throw new Error("login"); }
      return r.json();
    });
  }
  function buyButton() { return document.getElementById("buy"); }
  function mayBuy() { return state === "none" || state === "failed" || state === "not_drawn"; }
  function entriesNow() {
    if (entriesOpen === null) return null;
    return Date.now() < entriesOpen ? "soon" : Date.now() < entriesClose ? "open" : "closed";
  }
  function canBuy() { return (status === 1 || entriesNow() === "open") && stock > 0 && mayBuy(); }
  // Entries open or close: the panel's button and wording change with them.
  function entriesTick() {
    var now = entriesNow();
    if (now === null) return false;
    if (entriesState !== null && now !== entriesState) refresh();
    entriesState = now;
    if (now === "soon") {
      countdown.textContent = interpolate(gettext("Entries open in %s"), [duration((entriesOpen - Date.now()) / 1000)]);
      barClock(gettext("Entries open in"), Math.max(0, Math.round((entriesOpen - Date.now()) / 1000)));
    } else if (now === "open") {
      countdown.textContent = interpolate(gettext("Entries close in %s"), [duration((entriesClose - Date.now()) / 1000)]);
      barClock(gettext("Entries close in"), Math.max(0, Math.round((entriesClose - Date.now()) / 1000)));
    } else return false;
    keepBarRoom();
    var button = buyButton();
    if (button && form.hidden) button.disabled = !canBuy();
    drawTick();
    return true;
  }

  // The countdown counts against the server's remaining seconds, not the browser's clock.
  var saidMinute = false;
  function tick() {
    if (entriesTick()) return;
    if (status === 0) {
      var left = Math.max(0, Math.round((startsAt - Date.now()) / 1000));
      if (left > 0) {
        countdown.textContent = interpolate(gettext("Starts in %s"), [duration(left)]);
        barClock(gettext("Starts in"), left);
        if (left <= 60 && !saidMinute) { saidMinute = true; announce(gettext("The sale starts in one minute.")); }
        keepBarRoom();
        return;
      }
      status = 1;
      if (entriesOpen === null) announce(stock > 0 ? gettext("The sale has started: Buy now is on.") : gettext("Sold out"));
      refresh();
    }
    if (startsLine) startsLine.hidden = true;
    if (status === 1 && endsAt !== null && Date.now() >= endsAt) { status = 2; announce(gettext("This sale has ended.")); }
    if (status === 1) {
      var ending = endsAt === null ? null : (endsAt - Date.now()) / 1000;
      if (stock <= 0) countdown.textContent = entriesOpen !== null ? gettext("Entries closed") : gettext("Sold out for now");
      else if (ending !== null) countdown.textContent = interpolate(gettext("On sale now · ends in %s"), [duration(ending)]);
      else countdown.textContent = gettext("On sale now");
      barClock(stock <= 0 ? gettext("Sold out for now") : gettext("Ends in"), stock <= 0 ? null : ending);
    }
    if (status === 2) { countdown.textContent = gettext("This sale has ended."); barClock(gettext("Ended"), null); }
    var button = buyButton();
    if (button && form.hidden) button.disabled = !canBuy();
    drawTick();
    keepBarRoom();
  }
  // The phone's buy bar (seckill/buy_bar.html): a label and the time as HH / MM / SS blocks,
  // days before them; a label alone when there is no time to count.
  function barClock(label, seconds) {
    var clock = document.getElementById("bar-clock");
    if (!clock) return;
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
  // A draw sale's entrant (docs/draw.md): a countdown to the draw by the server's clock, then
  // one refresh a second until the panel shows the outcome (queued, or not drawn).
  var drawOffset = null;
  function drawTick() {
    var el = panel.querySelector("[data-draw-at]");
    if (!el) return;
    if (drawOffset === null) drawOffset = Number(el.dataset.now) - Date.now() / 1000;
    var left = Math.max(0, Math.round(Number(el.dataset.drawAt) - Date.now() / 1000 - drawOffset));
    el.textContent = left > 0 ? interpolate(gettext("Draw in %s"), [duration(left)]) : gettext("Drawing…");
    if (left === 0) refresh();
  }
  tick();
  setInterval(tick, 1000);

  // Every 5 s: status, stock and the shopper's state from the server; the panel and the stock
  // box are replaced only when the server renders them differently.
  function refresh() {
    return json("/seckill/state?goodsId=" + saleId).then(function (body) {
      if (body.code !== 0) return;
      var data = body.data, before = state;
      if (data.csrfToken) csrf = data.csrfToken;
      var wasInStock = stock > 0;
      status = data.seckillStatus;
      stock = data.stockCount;
      if (status === 0) startsAt = Date.now() + data.remainSeconds * 1000;
      if (data.entries) {
        entriesOpen = Date.now() + data.entries.opensIn * 1000;
        entriesClose = Date.now() + data.entries.closesIn * 1000;
      }
      // The public draw: replaced when the server renders it differently (the seed, once
      // drawn); the page's own copy is kept unless it is older than the draw.
      if (data.drawBox && drawBox && data.drawBox !== lastDraw) {
        var drawnNow = data.drawBox.indexOf('id="seed"') >= 0;
        if (lastDraw !== null || drawnNow !== (document.getElementById("seed") !== null)) {
          drawBox.outerHTML = data.drawBox;
          drawBox = document.getElementById("draw-info");
          if (drawnNow && lastDraw !== null) announce(gettext("The draw is made: the seed and the winners are published."));
        }
        lastDraw = data.drawBox;
      }
      endsAt = data.endsIn === null ? endsAt : Date.now() + data.endsIn * 1000;
      state = data.shopper ? data.shopper.state : "anonymous";
      // Only a panel that says something new replaces the one shown: the server's clock
      // (data-now, which the countdowns count by) changes on every render, and replacing the
      // panel for it would blank its countdowns and move what is below them.
      var panelWords = withoutClock(data.panel);
      if (panelWords !== lastPanel) {
        if (lastPanel !== null || state !== root.dataset.shopperState) { panel.innerHTML = data.panel; time.tick(); }
        lastPanel = panelWords;
      }
      if (data.stockBox !== lastStock) { stockBox.outerHTML = data.stockBox; stockBox = document.getElementById("stock-box"); lastStock = data.stockBox; }
      if (status === 1 && wasInStock && stock <= 0) announce(entriesOpen !== null ? gettext("Entries closed") : gettext("Sold out"));
      if (state !== before) stateChanged(before, data.shopper);
      if (!mayBuy()) form.hidden = true;
      tick();
    }).catch(function () {});
  }
  // After nav.js's /user/me, so both answers' CSRF tokens are of the one cookie it set.
  (window.SeckillMe || Promise.resolve()).then(refresh, refresh);
  setInterval(refresh, 5000);

  function withoutClock(html) { return html.replace(/ data-now="[0-9]*"/g, ""); }

  function stateChanged(before, shopper) {
    if (state === "queued") startPolling();
    var waited = before === "queued" || buying;
    if (buying && (state === "ordered" || state === "failed")) settled = true;
    if (state === "ordered" && waited) outcome(gettext("Got it! Your order is placed: pay before the time below runs out."), "ok");
    if (state === "paid") say("");
    if (state === "failed" && waited) outcome(gettext("Sorry, it sold out before your order was written."), "err");
    if (state === "queued" && before === "entered") say(gettext("You were drawn! Your order is being written…"), "ok");
    if (state === "not_drawn") (before === "entered" ? outcome : say)(gettext("You were not drawn this time."), "err");
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
      if (r.status === 401) { location.href = "/user/index?next=" + encodeURIComponent(location.pathname); throw new Error("login"); }
      var type = r.headers.get("Content-Type") || "";
      if (type.indexOf("application/json") === 0) return r.json().then(function (body) { throw body; });
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
          buying = false;
          form.hidden = true;
          player.pause();
          if (res.code === ALREADY_BOUGHT) {
            outcome(gettext("You already have an order for this item: see it below."), "err");
            return refresh();
          }
          // The panel (refreshed now) says it, with the draw's countdown: said once, to screen
          // readers, and the focus goes to it.
          if (res.code === ENTERED) {
            say(""); announce(res.msg); state = "entered";
            return refresh().then(function () { focusNote(document.getElementById("draw-entered")); });
          }
          if (res.code !== 0) { outcome(res.msg, "err"); return refresh(); }
          if (settled) return refresh();
          outcome(gettext("You are in the queue…"), "wait");
          state = "queued";
          startPolling();
          return refresh();
        });
      })
      .catch(function (e) { buying = false; if (e.message !== "login") say(gettext("Network problem, please try again."), "err"); });
  });

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
      if (pollState === "failed") outcome(gettext("Sorry, it sold out before your order was written."), "err");
      refresh();  // the panel: "Pay now" with the deadline, or the buy button again
    } else if (pollState === "waiting") {
      poll(attempt + 1);
    } else {
      say(gettext("Still processing your order. It will appear on "), "wait");
      var link = document.createElement("a");
      link.href = "/orders/";
      link.textContent = gettext("your orders page");
      result.appendChild(link);
      result.appendChild(document.createTextNode(pollState === "processing" ? gettext("; this page keeps checking.") : "."));
      if (pollState === "processing") poll(attempt + 1); else polling = false;
    }
  }
  if (state === "queued") startPolling();  // a reload while queued keeps waiting for the order
})();
