from django import forms
from django.conf import settings
from django.contrib.auth.password_validation import validate_password
from django.utils.translation import gettext_lazy as _

from seckill_site.text import validate_one_line
from users.fields import MobileField
from users.models import MOBILE_TAKEN_MESSAGE, User
from users.verification.forms import SmsCodeForm


class LoginForm(forms.Form):
    mobile = MobileField()
    password = forms.CharField(label=_("Password"), max_length=128, widget=forms.PasswordInput)


class RegisterForm(SmsCodeForm):  # needs the code texted to the mobile number
    mobile = MobileField()
    nickname = forms.CharField(label=_("Nickname"), max_length=40, required=False, validators=[validate_one_line])
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


class NoticeSettingsForm(forms.Form):
    """The messages a shopper wants (users.models.NoticeSettings): a box left unticked is off."""

    sale_reminders = forms.BooleanField(
        label=_("Sale reminders: a text before a sale I asked about opens"), required=False
    )
    draw_results = forms.BooleanField(label=_("Draw results: a text when I win a draw"), required=False)
    payment_reminders = forms.BooleanField(
        label=_("Payment reminders: a text a few minutes before an unpaid order expires"), required=False
    )
    shipping_news = forms.BooleanField(
        label=_("Shipping: a text when my order ships, with its carrier and tracking number"), required=False
    )
    refund_answers = forms.BooleanField(
        label=_("Refunds: a text when the merchant approves or declines my refund request"), required=False
    )
    merchant_replies = forms.BooleanField(
        label=_("Messages: a text when the merchant answers my message about an order"), required=False
    )
    language = forms.ChoiceField(label=_("Write my messages in"), choices=settings.LANGUAGES, required=False)
