from django import forms
from django.contrib.auth.password_validation import validate_password
from django.utils.translation import gettext_lazy as _

from users.models import User, mobile_normalize, mobile_validator


class MobileField(forms.CharField):
    """A mobile number, normalised (users.models.mobile_normalize) before it is validated: the
    same rule on the pages, in the API (which validates with these forms) and in the admin."""

    def __init__(self, **kwargs):
        kwargs.setdefault("label", _("Mobile"))
        kwargs.setdefault("max_length", 11)
        kwargs.setdefault("validators", [mobile_validator])
        super().__init__(**kwargs)

    def to_python(self, value):
        return mobile_normalize(super().to_python(value))


class LoginForm(forms.Form):
    mobile = MobileField()
    password = forms.CharField(label=_("Password"), max_length=128, widget=forms.PasswordInput)


class RegisterForm(forms.Form):
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
