"""The address book in the API: list and add, read, edit, delete, make default. Validation is
the pages' form (users.addresses.forms) and the writes are users.addresses.services, as on
/user/addresses."""

from django.utils.translation import gettext as _
from drf_spectacular.utils import extend_schema
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from seckill_site.api import BoundedJSONParser, api_fail, api_form_errors, api_ok, envelope, errors, id_parameter
from seckill_site.codes import Code
from users.addresses import selectors, services
from users.addresses.forms import AddressForm
from users.addresses.selectors import address_public_data
from users.addresses.serializers import AddressInputSerializer, AddressSerializer
from users.codes import UserCode
from users.http import signed_in
from users.models import Address
from users.permissions import IsShopper

ADDRESS_ID = id_parameter("address_id", "address id")
# API field -> AddressForm field
_ADDRESS_INPUT = {
    "recipient": "recipient",
    "phone": "phone",
    "region": "region",
    "city": "city",
    "district": "district",
    "street": "street",
    "postcode": "postcode",
    "isDefault": "is_default",
}


def _address_form(request: Request, *, current: dict | None = None) -> AddressForm | Response:
    """The body checked for types and lengths, then validated by the pages' form, on top of
    `current` (a partial edit); the form, or the 400 answer."""
    serializer = AddressInputSerializer(data=request.data, partial=current is not None)
    serializer.is_valid(raise_exception=True)
    data = dict(current or {})
    data.update({_ADDRESS_INPUT[name]: value for name, value in serializer.validated_data.items()})
    if not data.get("is_default"):
        data.pop("is_default", None)  # a checkbox: absent is unticked
    form = AddressForm(data)
    if not form.is_valid():
        return api_form_errors(form)
    return form


def _address_or_404(request: Request, address_id: str):
    return selectors.address_of_user(user=signed_in(request), address_id=address_id)


class AddressListApi(APIView):
    permission_classes = [IsShopper]
    parser_classes = [BoundedJSONParser]

    @extend_schema(
        tags=["users"],
        operation_id="users_addresses_list",
        summary="My address book, the default address first",
        responses={200: envelope("AddressListEnvelope", AddressSerializer(many=True)), **errors(401)},
    )
    def get(self, request: Request) -> Response:
        return api_ok([address_public_data(a) for a in selectors.addresses_of_user(user=signed_in(request))])

    @extend_schema(
        tags=["users"],
        summary="Add an address (at most 20; the first one becomes the default)",
        request=AddressInputSerializer,
        responses={201: envelope("AddressCreateEnvelope", AddressSerializer()), **errors(400, 401, 409)},
    )
    def post(self, request: Request) -> Response:
        form = _address_form(request)
        if isinstance(form, Response):
            return form
        try:
            address = services.address_create(user=signed_in(request), **form.cleaned_data_for_service())
        except services.AddressBookFull as full:
            return api_fail(UserCode.ADDRESS_BOOK_FULL, str(full))
        return api_ok(address_public_data(address), status_code=201)


class AddressDetailApi(APIView):
    permission_classes = [IsShopper]
    parser_classes = [BoundedJSONParser]

    @extend_schema(
        tags=["users"],
        summary="One of my addresses",
        parameters=[ADDRESS_ID],
        responses={200: envelope("AddressEnvelope", AddressSerializer()), **errors(401, 404)},
    )
    def get(self, request: Request, address_id: str) -> Response:
        address = _address_or_404(request, address_id)
        if address is None:
            return api_fail(Code.NOT_FOUND, _("no such address"))
        return api_ok(address_public_data(address))

    @extend_schema(
        tags=["users"],
        summary="Edit one of my addresses (any subset of the fields); paid orders keep their copy",
        parameters=[ADDRESS_ID],
        request=AddressInputSerializer(partial=True),
        responses={200: envelope("AddressUpdateEnvelope", AddressSerializer()), **errors(400, 401, 404)},
    )
    def patch(self, request: Request, address_id: str) -> Response:
        address = _address_or_404(request, address_id)
        if address is None:
            return api_fail(Code.NOT_FOUND, _("no such address"))
        current = {name: getattr(address, name) for name in services.ADDRESS_FIELDS}
        form = _address_form(request, current=current)
        if isinstance(form, Response):
            return form
        changes = form.cleaned_data_for_service()
        if not changes["is_default"]:
            changes.pop("is_default")  # the default changes only by making another one default
        try:
            return api_ok(address_public_data(services.address_update(address=address, changes=changes)))
        except Address.DoesNotExist:
            return api_fail(Code.NOT_FOUND, _("no such address"))

    @extend_schema(
        tags=["users"],
        summary="Delete one of my addresses (another becomes the default); paid orders keep their copy",
        parameters=[ADDRESS_ID],
        request=None,
        responses={200: envelope("AddressDeleteEnvelope"), **errors(401, 404)},
    )
    def delete(self, request: Request, address_id: str) -> Response:
        address = _address_or_404(request, address_id)
        if address is None:
            return api_fail(Code.NOT_FOUND, _("no such address"))
        services.address_delete(address=address)
        return api_ok()


class AddressDefaultApi(APIView):
    permission_classes = [IsShopper]

    @extend_schema(
        tags=["users"],
        summary="Make one of my addresses the default",
        parameters=[ADDRESS_ID],
        request=None,
        responses={200: envelope("AddressDefaultEnvelope", AddressSerializer()), **errors(401, 404)},
    )
    def post(self, request: Request, address_id: str) -> Response:
        address = _address_or_404(request, address_id)
        if address is None:
            return api_fail(Code.NOT_FOUND, _("no such address"))
        try:
            return api_ok(address_public_data(services.address_default_set(address=address)))
        except Address.DoesNotExist:
            return api_fail(Code.NOT_FOUND, _("no such address"))
