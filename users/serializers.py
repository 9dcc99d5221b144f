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
