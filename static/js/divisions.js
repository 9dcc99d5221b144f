// The address form's province, city and district: choosing one fills the next with the names
// under it, from /user/divisions (users.divisions), and a level with one name (a
// municipality's city) is chosen at once. Without this script the form's "show" button does
// the same through the server, which checks the three together either way.
(function () {
  var box = document.querySelector("[data-divisions]");
  if (!box) return;
  var select = function (level) { return box.querySelector('select[data-level="' + level + '"]'); };
  var province = select("province"), city = select("city"), district = select("district");
  if (!province || !city || !district) return;

  // "none to choose" only once the level above is chosen; before that, the prompt.
  function fill(element, names, aboveChosen) {
    var kept = element.value;
    element.textContent = "";
    element.add(new Option(names.length || !aboveChosen ? element.dataset.prompt : element.dataset.none, ""));
    names.forEach(function (name) { element.add(new Option(name, name)); });
    element.value = names.indexOf(kept) >= 0 ? kept : (names.length === 1 ? names[0] : "");
    element.disabled = names.length === 0;
  }

  fetch(box.dataset.divisions, { credentials: "same-origin", headers: { "Accept": "application/json" } })
    .then(function (r) { if (!r.ok) throw new Error(r.status); return r.json(); })
    .then(function (data) {
      // name -> [name, code, children] at each level
      var index = function (rows) {
        var map = {};
        rows.forEach(function (row) { map[row[0]] = row; });
        return map;
      };
      var provinces = index(data.provinces);
      var citiesOf = function () { var p = provinces[province.value]; return p ? index(p[2]) : {}; };
      function cityChanged() {
        var c = citiesOf()[city.value];
        // A province without cities has, below it, no districts either.
        var chosen = Boolean(c) || (Boolean(provinces[province.value]) && city.options.length === 1);
        fill(district, c ? c[2].map(function (row) { return row[0]; }) : [], chosen);
      }
      function provinceChanged() {
        var p = provinces[province.value];
        fill(city, p ? p[2].map(function (row) { return row[0]; }) : [], Boolean(p));
        cityChanged();
      }
      province.addEventListener("change", provinceChanged);
      city.addEventListener("change", cityChanged);
      var show = box.querySelector(".divisions-show");
      if (show) show.remove();  // the form's default button must be the save button again
    })
    .catch(function () { /* the "show" button stays: the page works as without the script */ });
})();
