// The list page is cached for everyone, so who is logged in comes from a small request.
(function () {
  var gettext = window.gettext || function (s) { return s; };
  var next = document.querySelector("[data-next-from-location]");
  if (next) next.value = location.pathname + location.search;
  // Here, not in an onchange attribute: the Content-Security-Policy allows no inline handlers.
  document.querySelectorAll("[data-submit-on-change]").forEach(function (select) {
    select.addEventListener("change", function () { select.form.submit(); });
  });
  var nav = document.getElementById("nav");
  var greeting = document.getElementById("greeting");
  var mine = document.getElementById("nav-mine");  // "My orders", "My addresses": for a logged-in shopper
  if (!nav || !greeting) return;
  // Other scripts wait for this answer before asking for a CSRF token of their own: a visitor
  // with no CSRF cookie yet would get one secret per answer, and the cookie would keep only one.
  window.SeckillMe = fetch(nav.dataset.meUrl, { headers: { Accept: "application/json" }, credentials: "same-origin" })
    .then(function (r) { return r.json(); });
  window.SeckillMe
    .then(function (body) {
      // Messages left for this visitor (the welcome after registering) on a cached page.
      var notes = document.getElementById("notes");
      if (body.data && body.data.messages && notes) {
        body.data.messages.forEach(function (m) {
          var item = document.createElement("li");
          item.className = "msg " + m.level;
          item.textContent = m.text;
          notes.appendChild(item);
        });
        notes.hidden = false;
      }
      if (!body.data || !body.data.nickname) {
        if (mine) mine.hidden = true;
        greeting.innerHTML = '<a></a> · <a></a>';
        greeting.children[0].href = nav.dataset.loginUrl;
        greeting.children[1].href = nav.dataset.registerUrl;
        greeting.children[0].textContent = gettext("Log in");
        greeting.children[1].textContent = gettext("Register");
        return;
      }
      if (mine) mine.hidden = false;
      var token = body.data.csrfToken;  // the CSRF cookie is HttpOnly in production
      var notices = document.createElement("a");
      notices.href = nav.dataset.noticesUrl;
      notices.textContent = gettext("Notifications");
      nav.insertBefore(notices, greeting);
      nav.insertBefore(document.createTextNode(" "), greeting);
      greeting.textContent = interpolate(gettext("Hi, %s"), [body.data.nickname]) + " ";
      var form = document.createElement("form");
      form.method = "post";
      form.action = nav.dataset.logoutUrl;
      form.innerHTML = '<input type="hidden" name="csrfmiddlewaretoken"><button class="btn link" type="submit"></button>';
      form.firstChild.value = token;
      form.lastChild.textContent = gettext("Log out");
      greeting.appendChild(form);
      if (body.data.isStaff) {
        var admin = document.createElement("a");
        admin.href = "/admin/";
        admin.textContent = gettext("Merchant admin");
        nav.insertBefore(admin, nav.lastElementChild);
      }
    })
    .catch(function () {});
  function interpolate(format, args) { return window.interpolate ? window.interpolate(format, args) : format.replace("%s", args[0]); }
})();
