"""This app's endpoints of the REST API, under /api/v1/ (seckill_site/api_urls.py includes them)."""

from django.urls import path

from sales import apis as sales

urlpatterns = [
    path("sales", sales.SaleListApi.as_view(), name="sales"),
    path("sales/<str:sale_id>", sales.SaleDetailApi.as_view(), name="sale"),
    path("merchant/sales", sales.MerchantSaleListApi.as_view(), name="merchant-sales"),
    path("merchant/sales/<str:sale_id>", sales.MerchantSaleDetailApi.as_view(), name="merchant-sale"),
]
