"""The address book's endpoints of the REST API, under /api/v1/ (users/api_urls.py includes them)."""

from django.urls import path

from users.addresses import apis

urlpatterns = [
    path("users/addresses", apis.AddressListApi.as_view(), name="addresses"),
    path("users/addresses/<str:address_id>", apis.AddressDetailApi.as_view(), name="address"),
    path("users/addresses/<str:address_id>/default", apis.AddressDefaultApi.as_view(), name="address-default"),
]
