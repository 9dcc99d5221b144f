"""The address book's shapes in the API schema (users.addresses.apis)."""

from rest_framework import serializers

from users.serializers import StrictBooleanField, StrictTextField


class AddressInputSerializer(serializers.Serializer):
    """An address as a client sends it: JSON strings (users.addresses.forms.AddressForm validates them)."""

    recipient = StrictTextField(max_length=32, help_text="who receives the parcel")
    phone = StrictTextField(max_length=11, help_text="the recipient's mobile number: 11 digits starting with 1")
    # The names are Chinese, from the list at GET /user/divisions (users.divisions).
    region = StrictTextField(
        max_length=32, help_text="province, autonomous region or municipality (GET /user/divisions)"
    )
    city = StrictTextField(
        max_length=32, allow_blank=True, help_text="of the province (a municipality's is itself), or empty"
    )
    district = StrictTextField(max_length=32, required=False, allow_blank=True, help_text="of the city, or empty")
    street = StrictTextField(max_length=120, help_text="street, building and door")
    postcode = StrictTextField(max_length=6, required=False, allow_blank=True, help_text="6 digits, or empty")
    isDefault = StrictBooleanField(required=False, help_text="make it the default address (the first one always is)")


class AddressSerializer(serializers.Serializer):
    """users.addresses.selectors.address_public_data."""

    id = serializers.IntegerField()
    recipient = serializers.CharField()
    phone = serializers.CharField()
    region = serializers.CharField()
    city = serializers.CharField(allow_blank=True)
    district = serializers.CharField(allow_blank=True, help_text="empty on addresses saved before it was asked")
    street = serializers.CharField()
    postcode = serializers.CharField(allow_blank=True)
    isDefault = serializers.BooleanField()
