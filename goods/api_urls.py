"""This app's endpoints of the REST API, under /api/v1/ (seckill_site/api_urls.py includes them)."""

from django.urls import path

from goods import apis as goods

urlpatterns = [
    path("sales", goods.SaleListApi.as_view(), name="sales"),
    path("sales/<str:sale_id>", goods.SaleDetailApi.as_view(), name="sale"),
    path("merchant/goods", goods.MerchantGoodsListApi.as_view(), name="merchant-goods"),
    path("merchant/goods/<str:goods_id>", goods.MerchantGoodsDetailApi.as_view(), name="merchant-goods-detail"),
    path("merchant/sales", goods.MerchantSaleListApi.as_view(), name="merchant-sales"),
    path("merchant/sales/<str:sale_id>", goods.MerchantSaleDetailApi.as_view(), name="merchant-sale"),
]
