from django import forms
from django.contrib.auth.password_validation import validate_password

from users.models import User, mobile_validator


class LoginForm(forms.Form):
    mobile = forms.CharField(max_length=11, validators=[mobile_validator])
    password = forms.CharField(max_length=128, widget=forms.PasswordInput)


class RegisterForm(forms.Form):
    mobile = forms.CharField(max_length=11, validators=[mobile_validator])
    nickname = forms.CharField(max_length=40, required=False)
    password = forms.CharField(max_length=128, widget=forms.PasswordInput)
    password_again = forms.CharField(max_length=128, widget=forms.PasswordInput, label="Password (again)")

    def clean_mobile(self) -> str:
        mobile = self.cleaned_data["mobile"]
        if User.objects.filter(mobile=mobile).exists():
            raise forms.ValidationError("This mobile number is already registered.")
        return mobile

    def clean(self):
        cleaned = super().clean()
        password = cleaned.get("password")
        if password and password != cleaned.get("password_again"):
            self.add_error("password_again", "The two passwords differ.")
        elif password:
            try:
                validate_password(password)
            except forms.ValidationError as error:
                self.add_error("password", error)
        return cleaned

    def cleaned_data_for_service(self) -> dict[str, str]:
        data = self.cleaned_data
        return {"mobile": data["mobile"], "password": data["password"], "nickname": data.get("nickname", "")}
