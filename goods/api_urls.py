"""This app's endpoints of the REST API, under /api/v1/ (seckill_site/api_urls.py includes them)."""

from django.urls import path

from goods import apis as goods

urlpatterns = [
    path("merchant/goods", goods.MerchantGoodsListApi.as_view(), name="merchant-goods"),
    path("merchant/goods/<str:goods_id>", goods.MerchantGoodsDetailApi.as_view(), name="merchant-goods-detail"),
]
