from django.urls import path

from orders import views

app_name = "orders"
urlpatterns = [
    path("", views.my_orders, name="list"),
    path("<str:order_no>", views.order_detail, name="detail"),
]
