from django.urls import include, path

from orders import views
from orders.payments import views as payment_views

app_name = "orders"
urlpatterns = [
    path("", views.my_orders, name="list"),
    path("<str:order_no>", views.order_detail, name="detail"),
    path("<str:order_no>/pay", payment_views.order_pay, name="pay"),
    path("<str:order_no>/pay/<str:trade_no>/card", payment_views.card, name="card"),
    path("<str:order_no>/paying", payment_views.paying, name="paying"),
    path("<str:order_no>/cancel", views.order_cancel, name="cancel"),
    path("", include("orders.fulfilment.urls")),
    path("", include("orders.contact.urls")),
]
