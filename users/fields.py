from django import forms
from django.utils.translation import gettext_lazy as _

from users.models import mobile_normalize, mobile_validator


class TelInput(forms.TextInput):
    """A phone keypad on phones (`type=tel`), and the browser's autofill for the number."""

    input_type = "tel"

    def __init__(self, attrs=None):
        super().__init__({"autocomplete": "tel-national", **(attrs or {})})


class MobileField(forms.CharField):
    """A mobile number, normalised (users.models.mobile_normalize) before it is validated: the
    same rule on the pages, in the API (which validates with these forms), in the admin and in
    the text-message forms (users.verification)."""

    def __init__(self, **kwargs):
        kwargs.setdefault("label", _("Mobile number"))
        kwargs.setdefault("widget", TelInput())
        kwargs.setdefault("max_length", 11)
        kwargs.setdefault("validators", [mobile_validator])
        super().__init__(**kwargs)

    def to_python(self, value):
        return mobile_normalize(super().to_python(value))
