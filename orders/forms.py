"""The shopper's forms on an order's page."""

from django import forms
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy

from orders.models import MESSAGE_MAX, Carrier, MessageInvalid, message_text_clean

# What most shoppers say, as on every shop's refund form; "other" asks for their words.
REFUND_REASONS = [
    ("mistake", gettext_lazy("I bought it by mistake")),
    ("not needed", gettext_lazy("I no longer need it")),
    ("too slow", gettext_lazy("It has not shipped in time")),
    ("other", gettext_lazy("Another reason")),
]


class RefundRequestForm(forms.Form):
    reason = forms.ChoiceField(label=gettext_lazy("Why"), choices=REFUND_REASONS)
    detail = forms.CharField(label=gettext_lazy("In your words (optional)"), max_length=150, required=False)

    def clean(self):
        cleaned = super().clean()
        if cleaned.get("reason") == "other" and not cleaned.get("detail", "").strip():
            self.add_error("detail", _("Say why you want a refund."))
        return cleaned

    def reason_text(self) -> str:
        return refund_reason_text(self.cleaned_data["reason"], self.cleaned_data["detail"])


def refund_reason_text(reason: str, detail: str) -> str:
    """The reason as the merchant reads it: the choice, then the shopper's words."""
    label = str(dict(REFUND_REASONS)[reason])
    detail = detail.strip()
    return f"{label}: {detail}" if detail else label


class MessageForm(forms.Form):
    """A message on an order's thread, the shopper's or the merchant's (orders.contact), cleaned
    as the thread keeps it, so the form's errors are the services' own."""

    text = forms.CharField(
        label=gettext_lazy("Your message"),
        # The length is message_text_clean's to judge, on the text as kept.
        widget=forms.Textarea(attrs={"rows": 3, "maxlength": MESSAGE_MAX}),
        strip=False,
        help_text=gettext_lazy("Plain text, at most 500 characters."),
    )

    def clean_text(self) -> str:
        try:
            return message_text_clean(self.cleaned_data["text"])
        except MessageInvalid as invalid:
            raise forms.ValidationError(str(invalid)) from invalid


# Why a parcel goes back, as every shop's after-sales form asks (退货原因).
RETURN_REASONS = [
    ("changed mind", gettext_lazy("I changed my mind (seven days, no reason needed)")),
    ("not as described", gettext_lazy("It is not as described")),
    ("damaged", gettext_lazy("It arrived damaged or does not work")),
    ("wrong item", gettext_lazy("I received the wrong item")),
    ("other", gettext_lazy("Another reason")),
]


class ReturnRequestForm(forms.Form):
    reason = forms.ChoiceField(label=gettext_lazy("Why"), choices=RETURN_REASONS)
    detail = forms.CharField(label=gettext_lazy("In your words (optional)"), max_length=150, required=False)

    def clean(self):
        cleaned = super().clean()
        if cleaned.get("reason") == "other" and not cleaned.get("detail", "").strip():
            self.add_error("detail", _("Say why you want to send it back."))
        return cleaned

    def reason_text(self) -> str:
        return return_reason_text(self.cleaned_data["reason"], self.cleaned_data["detail"])


def return_reason_text(reason: str, detail: str) -> str:
    """The reason as the merchant reads it: the choice, then the shopper's words."""
    label = str(dict(RETURN_REASONS)[reason])
    detail = detail.strip()
    return f"{label}: {detail}" if detail else label


class ReturnParcelForm(forms.Form):
    """The parcel the shopper sent back; its tracking number is checked as the shipping desk
    checks it (orders.fulfilment.services.tracking_no_clean, which the view runs)."""

    carrier = forms.ChoiceField(label=gettext_lazy("Carrier"), choices=[("", "---------"), *Carrier.choices])
    tracking_no = forms.CharField(label=gettext_lazy("Tracking number"), max_length=60)
