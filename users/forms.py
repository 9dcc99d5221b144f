from django import forms
from django.contrib.auth.password_validation import validate_password
from django.utils.translation import gettext_lazy as _

from users.fields import MobileField
from users.models import MOBILE_TAKEN_MESSAGE, Address, User, mobile_normalize
from users.verification.forms import SmsCodeForm


class LoginForm(forms.Form):
    mobile = MobileField()
    password = forms.CharField(label=_("Password"), max_length=128, widget=forms.PasswordInput)


class RegisterForm(SmsCodeForm):  # needs the code texted to the mobile number
    mobile = MobileField()
    nickname = forms.CharField(label=_("Nickname"), max_length=40, required=False)
    password = forms.CharField(label=_("Password"), max_length=128, widget=forms.PasswordInput)
    password_again = forms.CharField(label=_("Password (again)"), max_length=128, widget=forms.PasswordInput)

    def _post_clean(self) -> None:
        super()._post_clean()  # the texted code, checked once everything else is valid
        if not self.errors:
            self.mobile_free_check()

    def mobile_free_check(self) -> None:
        """Answers "already registered" only to whoever holds a valid register code for the number,
        i.e. its owner: before the code it would tell anyone which numbers have accounts.
        (A registered number gets no register code: users.verification.sms_code_send.)"""
        if User.objects.filter(mobile=self.cleaned_data["mobile"]).exists():
            self.add_error("mobile", MOBILE_TAKEN_MESSAGE)

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


class AddressForm(forms.ModelForm):
    """An address book entry, on the shopper's page and in the API (users.apis)."""

    phone = MobileField(label=_("Phone"))
    is_default = forms.BooleanField(label=_("Use as my default address"), required=False)

    class Meta:
        model = Address
        # is_default is the form's own field: the service decides what a default means.
        fields = ("recipient", "phone", "region", "city", "street", "postcode")
        widgets = {
            "recipient": forms.TextInput(attrs={"autocomplete": "shipping name"}),
            "region": forms.TextInput(attrs={"autocomplete": "shipping address-level1"}),
            "city": forms.TextInput(attrs={"autocomplete": "shipping address-level2"}),
            "street": forms.TextInput(attrs={"autocomplete": "shipping street-address"}),
            "postcode": forms.TextInput(attrs={"autocomplete": "shipping postal-code", "inputmode": "numeric"}),
        }

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.fields["phone"].widget.input_type = "tel"
        self.fields["phone"].widget.attrs.update({"autocomplete": "shipping tel"})
        for name in ("recipient", "region", "city", "street"):
            field = self.fields[name]
            if isinstance(field, forms.CharField):
                field.strip = True

    def clean_postcode(self) -> str:
        # Full-width digits from a phone's IME are digits, as in a mobile number.
        return mobile_normalize(self.cleaned_data.get("postcode", ""))

    def cleaned_data_for_service(self) -> dict:
        return {name: self.cleaned_data[name] for name in (*self.Meta.fields, "is_default")}
