// "Text me a code": ask /user/sms/send for a code to the number typed above, then count
// down until the server allows another one (it says how long in data.resendIn).
(function () {
  var button = document.getElementById("sms-send");
  if (!button) return;
  var status = document.getElementById("sms-status");
  var label = button.textContent;

  function countdown(seconds) {
    button.disabled = true;
    (function tick() {
      if (seconds <= 0) { button.disabled = false; button.textContent = label; return; }
      button.textContent = button.dataset.resend.replace("%s", seconds);
      seconds -= 1;
      setTimeout(tick, 1000);
    })();
  }

  button.addEventListener("click", function () {
    var form = button.form;
    var body = new FormData();
    body.append("mobile", form.elements.mobile.value.trim());
    body.append("purpose", button.dataset.purpose);
    body.append("csrfmiddlewaretoken", form.elements.csrfmiddlewaretoken.value);
    button.disabled = true;
    fetch("/user/sms/send", { method: "POST", body: body, credentials: "same-origin", headers: { "Accept": "application/json" } })
      .then(function (r) { return r.json(); })
      .then(function (answer) {
        // Say where the code went (the number as typed), or why none was sent.
        status.textContent = answer.code === 0 ? button.dataset.sent.replace("%s", body.get("mobile")) : answer.msg;
        status.className = answer.code === 0 ? "ok" : "field-error";
        var wait = answer.data && answer.data.resendIn;
        if (wait) countdown(wait); else button.disabled = false;
      })
      .catch(function () { button.disabled = false; });
  });
})();
