"""This app's endpoints of the REST API, under /api/v1/ (seckill_site/api_urls.py includes them)."""

from django.urls import path

from orders import apis as orders

urlpatterns = [
    path("orders", orders.OrderListApi.as_view(), name="orders"),
    path("orders/<str:order_no>", orders.OrderDetailApi.as_view(), name="order"),
    path("orders/<str:order_no>/pay", orders.OrderPayApi.as_view(), name="order-pay"),
    path("orders/<str:order_no>/payments/<str:trade_no>/card", orders.PaymentCardApi.as_view(), name="payment-card"),
    path("orders/<str:order_no>/cancel", orders.OrderCancelApi.as_view(), name="order-cancel"),
    path("orders/<str:order_no>/refund-request", orders.OrderRefundRequestApi.as_view(), name="order-refund-request"),
    path("orders/<str:order_no>/return-request", orders.OrderReturnRequestApi.as_view(), name="order-return-request"),
    path(
        "orders/<str:order_no>/return-request/parcel", orders.OrderReturnParcelApi.as_view(), name="order-return-parcel"
    ),
    path("orders/<str:order_no>/messages", orders.OrderMessageApi.as_view(), name="order-messages"),
    path("orders/<str:order_no>/received", orders.OrderReceivedApi.as_view(), name="order-received"),
    path("merchant/sales/<str:sale_id>/figures", orders.MerchantSaleFiguresApi.as_view(), name="merchant-sale-figures"),
]
