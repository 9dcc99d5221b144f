"""Shapes of the users API for the OpenAPI schema. Input is validated by the pages' forms
(users.forms), so the rules for a mobile number or a password live in one place."""

from rest_framework import serializers


class LoginInputSerializer(serializers.Serializer):
    mobile = serializers.CharField(max_length=11, help_text="11 digits starting with 1")
    password = serializers.CharField(max_length=128)


class RegisterInputSerializer(serializers.Serializer):
    mobile = serializers.CharField(max_length=11, help_text="11 digits starting with 1")
    password = serializers.CharField(max_length=128, help_text="at least 6 characters, not a common one")
    nickname = serializers.CharField(max_length=40, required=False, allow_blank=True)
    code = serializers.CharField(
        min_length=6, max_length=6, help_text="the 6-digit code texted by POST users/sms/send (purpose register)"
    )


class SmsSendInputSerializer(serializers.Serializer):
    mobile = serializers.CharField(max_length=11, help_text="11 digits starting with 1")
    purpose = serializers.ChoiceField(choices=["register", "login"], help_text="what the code will be good for")


class SmsSentSerializer(serializers.Serializer):
    resendIn = serializers.IntegerField(help_text="seconds before this number may ask for another code")


class CodeLoginInputSerializer(serializers.Serializer):
    mobile = serializers.CharField(max_length=11, help_text="11 digits starting with 1")
    code = serializers.CharField(min_length=6, max_length=6, help_text="the code texted for purpose login")


class UserSerializer(serializers.Serializer):
    """users.selectors.user_public_data: never a password field."""

    id = serializers.IntegerField()
    mobile = serializers.CharField()
    nickname = serializers.CharField()
    avatar = serializers.CharField(allow_null=True)
    registerDate = serializers.DateTimeField()
    lastLoginDate = serializers.DateTimeField(allow_null=True)
    loginCount = serializers.IntegerField()


class SessionSerializer(serializers.Serializer):
    token = serializers.CharField(help_text="send as `Authorization: Token <token>`")
    user = UserSerializer()


class TokenSerializer(serializers.Serializer):
    prefix = serializers.CharField(help_text="the token's first characters, to tell it apart")
    createdAt = serializers.DateTimeField()
    expiresAt = serializers.DateTimeField()


# --- the address book ----------------------------------------------------------------------------


class StrictTextField(serializers.CharField):
    """A string, and only a string: DRF's CharField takes a JSON number as its digits. Lengths
    are checked as sent (no trimming here); users.addresses.forms.AddressForm then trims and validates."""

    def __init__(self, **kwargs):
        kwargs.setdefault("trim_whitespace", False)
        super().__init__(**kwargs)

    def to_internal_value(self, data):
        if not isinstance(data, str):
            self.fail("invalid")
        return super().to_internal_value(data)


class StrictBooleanField(serializers.BooleanField):
    """true or false, not "yes", 1 or "on"."""

    def to_internal_value(self, data):
        if not isinstance(data, bool):
            self.fail("invalid", input=data)
        return data
