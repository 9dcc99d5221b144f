// Item page: countdown -> buy -> captcha -> one-time path -> doSeckill -> poll the result.
(function () {
  var gettext = window.gettext || function (s) { return s; };
  var root = document.getElementById("sale");
  if (!root) return;
  var saleId = root.dataset.saleId;
  var buy = document.getElementById("buy");
  var countdown = document.getElementById("countdown");
  var form = document.getElementById("captcha-form");
  var img = document.getElementById("captcha-img");
  var answer = document.getElementById("captcha-answer");
  var result = document.getElementById("result");
  var stock = document.getElementById("stock");
  var csrf = root.querySelector("input[name=csrfmiddlewaretoken]").value;

  function say(text, kind) { result.textContent = text; result.className = "result " + (kind || ""); }
  function json(url, options) {
    options = options || {};
    options.credentials = "same-origin";
    options.headers = Object.assign({ Accept: "application/json" }, options.headers || {});
    return fetch(url, options).then(function (r) {
      if (r.status === 401) { location.href = "/user/index?next=" + encodeURIComponent(location.pathname); throw new Error("login"); }
      return r.json();
    });
  }

  // Count down against the server's remaining seconds, not the client's clock.
  var status = Number(root.dataset.status);
  var startsAt = Date.now() + Number(root.dataset.remain) * 1000;
  function tick() {
    if (status === 0) {
      var left = Math.max(0, Math.round((startsAt - Date.now()) / 1000));
      if (left > 0) {
        var h = Math.floor(left / 3600), m = Math.floor(left % 3600 / 60), s = left % 60;
        countdown.textContent = gettext("Starts in ") + (h ? h + "h " : "") + m + "m " + s + "s";
        return;
      }
      status = 1;
    }
    if (status === 1) { countdown.textContent = gettext("On sale now!"); buy.disabled = Number(stock.textContent) <= 0; if (buy.disabled) countdown.textContent = gettext("Sold out"); }
    if (status === 2) { countdown.textContent = gettext("This sale has ended."); buy.disabled = true; }
  }
  tick();
  var timer = setInterval(function () { tick(); if (status !== 0) clearInterval(timer); }, 1000);

  function refreshStock() {
    json("/goods/getDetails/" + saleId).then(function (body) {
      if (body.code !== 0) return;
      stock.textContent = body.data.goods.stockCount;
      status = body.data.seckillStatus;
      tick();
    }).catch(function () {});
  }
  setInterval(refreshStock, 5000);

  function newCaptcha() { img.src = "/seckill/verifyCode?goodsId=" + saleId + "&t=" + Date.now(); answer.value = ""; }
  buy.addEventListener("click", function () { form.hidden = false; newCaptcha(); answer.focus(); say(""); });
  document.getElementById("captcha-refresh").addEventListener("click", newCaptcha);

  form.addEventListener("submit", function (event) {
    event.preventDefault();
    say(gettext("Checking…"));
    json("/seckill/path?goodsId=" + saleId + "&verifyCode=" + encodeURIComponent(answer.value.trim()))
      .then(function (body) {
        if (body.code !== 0) { say(body.msg, "err"); newCaptcha(); return; }
        return json("/seckill/" + body.data + "/doSeckill", {
          method: "POST",
          headers: { "Content-Type": "application/x-www-form-urlencoded", "X-CSRFToken": csrf },
          body: "goodsId=" + encodeURIComponent(saleId),
        }).then(function (res) {
          if (res.code !== 0) { say(res.msg, "err"); form.hidden = true; return; }
          form.hidden = true;
          buy.disabled = true;
          say(gettext("You are in the queue…"));
          poll(0);
        });
      })
      .catch(function (e) { if (e.message !== "login") say(gettext("Network problem, please try again."), "err"); });
  });

  // Poll with backoff (static/js/poll.js). "Queued" never turns into "sold out" here: only
  // the server's -1 says the order failed; a long wait says "still processing" instead.
  var plan = window.SeckillPoll;
  function ordersLink(text) {
    var link = document.createElement("a");
    link.href = "/orders/";
    link.textContent = text;
    return link;
  }
  function poll(attempt) {
    setTimeout(function () {
      json("/seckill/result?goodsId=" + saleId).then(function (body) {
        if (body.code !== 0) { say(body.msg, "err"); return; }
        show(plan.state(body.data, attempt), body.data, attempt);
      }).catch(function (e) { if (e.message !== "login") show(plan.state(null, attempt), null, attempt); });
    }, plan.delay(attempt));
  }
  function show(state, data, attempt) {
    if (state === "ordered") {
      say(gettext("Got it! Your order is placed. "), "ok");
      var link = document.createElement("a");
      link.href = "/orders/?order=" + data;
      link.textContent = gettext("Pay now →");
      result.appendChild(link);
      refreshStock();
    } else if (state === "failed") {
      say(gettext("Sorry, it sold out before your order was written."), "err");
    } else if (state === "waiting") {
      poll(attempt + 1);
    } else {
      say(gettext("Still processing your order. It will appear on "), "wait");
      result.appendChild(ordersLink(gettext("your orders page")));
      result.appendChild(document.createTextNode(state === "processing" ? gettext("; this page keeps checking.") : "."));
      if (state === "processing") poll(attempt + 1);
    }
  }
})();
