// The list page is cached for everyone, so who is logged in comes from a small request.
(function () {
  var nav = document.getElementById("nav");
  var greeting = document.getElementById("greeting");
  if (!nav || !greeting) return;
  fetch(nav.dataset.meUrl, { headers: { Accept: "application/json" }, credentials: "same-origin" })
    .then(function (r) { return r.json(); })
    .then(function (body) {
      if (!body.data) {
        greeting.innerHTML = '<a href="/user/index">Log in</a> · <a href="/user/register">Register</a>';
        return;
      }
      var token = (document.cookie.match(/(?:^|; )csrftoken=([^;]+)/) || [])[1] || "";
      greeting.textContent = "Hi, " + body.data.nickname + " ";
      var form = document.createElement("form");
      form.method = "post";
      form.action = "/user/logout";
      form.innerHTML = '<input type="hidden" name="csrfmiddlewaretoken"><button class="btn link" type="submit">Log out</button>';
      form.firstChild.value = token;
      greeting.appendChild(form);
      if (body.data.isStaff) {
        var admin = document.createElement("a");
        admin.href = "/admin/";
        admin.textContent = "Merchant admin";
        nav.appendChild(admin);
      }
    })
    .catch(function () {});
})();
