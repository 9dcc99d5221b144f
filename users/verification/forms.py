"""Forms of the text-message flow: asking for a code, and any form that a texted code completes
(registration, logging in by code)."""

from django import forms
from django.core.validators import RegexValidator
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy

from users.fields import MobileField
from users.verification import services


class SmsCodeForm(forms.Form):
    """A form with a `mobile` field and the code texted to it for `sms_purpose`. The code is
    checked last, only once everything else is valid, so a typo elsewhere does not use up
    one of the code's few checks."""

    sms_purpose = "register"
    code = forms.CharField(
        label=gettext_lazy("Code from the text message"),
        min_length=6,
        max_length=6,
        validators=[RegexValidator(r"^[0-9]{6}$", gettext_lazy("Enter the 6 digits of the code."))],
        widget=forms.TextInput(attrs={"inputmode": "numeric", "autocomplete": "one-time-code"}),
    )

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.fields["code"] = self.fields.pop("code")  # after the form's own fields

    def _post_clean(self) -> None:
        super()._post_clean()  # type: ignore[misc]  # BaseForm's hook after clean(); the stubs omit it
        if self.errors:
            return
        if not services.sms_code_check(
            mobile=self.cleaned_data["mobile"], purpose=self.sms_purpose, code=self.cleaned_data["code"]
        ):
            self.add_error("code", _("Wrong or expired code: ask for a new one."))


class CodeLoginForm(SmsCodeForm):
    sms_purpose = "login"
    mobile = MobileField()


class SmsSendForm(forms.Form):
    mobile = MobileField()
    purpose = forms.ChoiceField(choices=[(purpose, purpose) for purpose in services.PURPOSES])
