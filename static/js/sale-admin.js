// The sale form (sales.admin.SaleAdmin): the draw's settings show only while "admission" is a
// draw. Without this script they stay, in their fieldset marked "Draw sales only".
(function () {
  function start() {
    var admission = document.getElementById("id_admission");
    var draw = document.querySelector("fieldset.draw-settings");
    if (!admission || !draw) return;
    // A fieldset that holds an error stays, so the merchant sees what to fix.
    function show() { draw.hidden = admission.value !== "draw" && !draw.querySelector(".errorlist"); }
    admission.addEventListener("change", show);
    show();
  }
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", start);
  else start();
})();
