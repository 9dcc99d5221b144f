from django.urls import path

from orders import views

app_name = "orders"
urlpatterns = [
    path("", views.my_orders, name="list"),
    path("<str:order_no>", views.order_detail, name="detail"),
    path("<str:order_no>/pay", views.order_pay, name="pay"),
    path("<str:order_no>/cancel", views.order_cancel, name="cancel"),
]
