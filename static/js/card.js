// The card form (orders/card.html): Stripe.js tokenizes the card in the browser, this page
// sends only the token to the shop, which pays the attempt on the server; when the bank asks
// for authentication (3-D Secure) Stripe.js shows it, then the shopper waits for the word. A
// declined card leaves the form ready for another.
(function () {
  var form = document.getElementById("card-form");
  if (!form || !window.Stripe) return;
  var gettext = window.gettext || function (s) { return s; };
  var stripe = window.Stripe(form.dataset.cardKey);
  var card = stripe.elements().create("card");
  card.mount("#card-element");
  var errors = document.getElementById("card-errors");
  var button = document.getElementById("card-pay");
  var csrf = form.elements.csrfmiddlewaretoken.value;

  function refuse(message) {
    errors.textContent = message || gettext("The card was not accepted.");
    errors.hidden = false;
    button.disabled = false;
    button.focus();
  }

  form.addEventListener("submit", async function (event) {
    event.preventDefault();
    button.disabled = true;
    errors.hidden = true;
    var made = await stripe.createToken(card);
    if (made.error) return refuse(made.error.message);
    var answer;
    try {
      var response = await fetch(form.dataset.payUrl, {
        method: "POST",
        headers: { "Content-Type": "application/json", Accept: "application/json", "X-CSRFToken": csrf },
        body: JSON.stringify({ token: made.token.id }),
      });
      answer = await response.json();
    } catch (error) {
      return refuse(gettext("The shop could not be reached; nothing was charged. Try again."));
    }
    // A declined card fails its attempt; the next card goes on a new one behind it, here.
    if (answer.data && answer.data.payUrl) form.dataset.payUrl = answer.data.payUrl;
    if (answer.code !== 0) return refuse(answer.msg);
    if (answer.data.clientSecret) {
      // Passed or not, the bank's check ends on the waiting page, which asks the card
      // service what happened and says so: paid, or not completed with a way to pay again.
      await stripe.confirmCardPayment(answer.data.clientSecret);
    }
    window.location.assign(answer.data.next);
  });
})();
