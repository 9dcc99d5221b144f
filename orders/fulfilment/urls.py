"""The shopper's pages after paying, under /orders/ in the app's namespace (orders/urls.py)."""

from django.urls import path

from orders.fulfilment import views

urlpatterns = [
    path("<str:order_no>/refund-request", views.refund_request, name="refund_request"),
    path("<str:order_no>/refund-request/withdraw", views.refund_request_withdrawn, name="refund_withdraw"),
    path("<str:order_no>/received", views.order_received, name="received"),
    path("<str:order_no>/return-request", views.return_request, name="return_request"),
    path("<str:order_no>/return-request/withdraw", views.return_request_withdrawn, name="return_withdraw"),
    path("<str:order_no>/return-request/parcel", views.return_parcel, name="return_parcel"),
]
