"""The address book's pages, under /user/ in the app's namespace (users/urls.py includes them)."""

from django.urls import path

from users.addresses import views

urlpatterns = [
    path("addresses", views.address_book, name="addresses"),
    path("addresses/<str:address_id>", views.address_edit, name="address-edit"),
    path("addresses/<str:address_id>/delete", views.address_delete, name="address-delete"),
    path("addresses/<str:address_id>/default", views.address_default, name="address-default"),
]
