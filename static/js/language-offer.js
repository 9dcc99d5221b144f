// The page in the language the browser prefers, offered when the page is in another: a page's
// address names its language and an edge keeps one copy per address, so nobody is sent there by
// their browser's languages. Not once the visitor chose a language, with the switch or here
// (remembered in localStorage: the language cookie may be HttpOnly).
(function () {
  var KEY = "seckill.languageChosen";
  var offers = Array.prototype.slice.call(document.querySelectorAll("[data-language-offer]"));
  function chosen() { try { return localStorage.getItem(KEY) === "1"; } catch (e) { return true; } }
  function choose() { try { localStorage.setItem(KEY, "1"); } catch (e) { /* private mode: asked again */ } }
  document.querySelectorAll("form.language").forEach(function (form) { form.addEventListener("submit", choose); });
  if (!offers.length || chosen()) return;
  var page = document.documentElement.lang.toLowerCase();
  var codes = [page].concat(offers.map(function (offer) { return offer.dataset.languageOffer; }));
  // A browser's tag to one of the shop's languages as Django matches them: the tag itself, else
  // its first part ("zh-CN" and "zh-TW" read the shop's only Chinese, "zh-hans").
  function supported(tag) {
    tag = String(tag).toLowerCase();
    var primary = tag.split("-")[0];
    return codes.filter(function (code) { return code === tag; })[0] ||
      codes.filter(function (code) { return code.split("-")[0] === primary; })[0] || null;
  }
  var tags = navigator.languages && navigator.languages.length ? navigator.languages : [navigator.language || ""];
  var wanted = null;
  for (var i = 0; i < tags.length && !wanted; i += 1) wanted = supported(tags[i]);
  if (!wanted || wanted === page) return;
  var offer = offers.filter(function (o) { return o.dataset.languageOffer === wanted; })[0];
  var go = offer.querySelector("[data-language-offer-go]");
  go.href += "&next=" + encodeURIComponent(location.pathname + location.search);
  go.addEventListener("click", choose);
  offer.querySelector("[data-language-offer-no]").addEventListener("click", function () {
    choose();
    offer.hidden = true;
    document.getElementById("main").focus();
  });
  offer.hidden = false;
})();
