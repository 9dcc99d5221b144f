from django import forms
from django.contrib.auth.password_validation import validate_password
from django.utils.translation import gettext_lazy as _

from users.fields import MobileField
from users.models import User
from users.verification import SmsCodeForm


class LoginForm(forms.Form):
    mobile = MobileField()
    password = forms.CharField(label=_("Password"), max_length=128, widget=forms.PasswordInput)


class RegisterForm(SmsCodeForm):  # needs the code texted to the mobile number
    mobile = MobileField()
    nickname = forms.CharField(label=_("Nickname"), max_length=40, required=False)
    password = forms.CharField(label=_("Password"), max_length=128, widget=forms.PasswordInput)
    password_again = forms.CharField(label=_("Password (again)"), max_length=128, widget=forms.PasswordInput)

    def clean_mobile(self) -> str:
        mobile = self.cleaned_data["mobile"]
        if User.objects.filter(mobile=mobile).exists():
            from users.services import MOBILE_TAKEN_MESSAGE

            raise forms.ValidationError(MOBILE_TAKEN_MESSAGE)
        return mobile

    def clean(self):
        cleaned = super().clean()
        password = cleaned.get("password")
        if password and password != cleaned.get("password_again"):
            self.add_error("password_again", _("The two passwords differ."))
        elif password:
            try:
                validate_password(password)
            except forms.ValidationError as error:
                self.add_error("password", error)
        return cleaned

    def cleaned_data_for_service(self) -> dict[str, str]:
        data = self.cleaned_data
        return {"mobile": data["mobile"], "password": data["password"], "nickname": data.get("nickname", "")}


def form_errors_message(form) -> str:
    """The errors as people read them: each field by its label ("Mobile number: This field is
    required."), never its name in the code."""
    parts = []
    for field, errors in form.errors.items():
        label = form.fields[field].label if field in form.fields else None
        parts.append(f"{label}: {' '.join(errors)}" if label else " ".join(errors))
    return " ".join(parts)
