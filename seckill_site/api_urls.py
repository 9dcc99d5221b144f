"""/api/: the REST API (v1), its OpenAPI schema, and the documentation pages (served from
drf-spectacular-sidecar's static files: no CDN)."""

from django.urls import include, path
from drf_spectacular.views import SpectacularAPIView, SpectacularSwaggerView

from goods import apis as goods
from orders import apis as orders
from seckill import apis as seckill
from users import apis as users
from users import verification_apis as verification

v1 = [
    path("users/register", users.RegisterApi.as_view(), name="register"),
    path("users/login", users.LoginApi.as_view(), name="login"),
    path("users/logout", users.LogoutApi.as_view(), name="logout"),
    path("users/logout-everywhere", users.LogoutEverywhereApi.as_view(), name="logout-everywhere"),
    path("users/tokens", users.TokenListApi.as_view(), name="tokens"),
    path("users/me", users.MeApi.as_view(), name="me"),
    path("users/sms/send", verification.SmsSendApi.as_view(), name="sms-send"),
    path("users/login/code", verification.CodeLoginApi.as_view(), name="login-code"),
    path("users/addresses", users.AddressListApi.as_view(), name="addresses"),
    path("users/addresses/<str:address_id>", users.AddressDetailApi.as_view(), name="address"),
    path("users/addresses/<str:address_id>/default", users.AddressDefaultApi.as_view(), name="address-default"),
    path("sales", goods.SaleListApi.as_view(), name="sales"),
    path("sales/<str:sale_id>", goods.SaleDetailApi.as_view(), name="sale"),
    path("sales/<str:sale_id>/captcha", seckill.CaptchaApi.as_view(), name="captcha"),
    path("sales/<str:sale_id>/captcha/audio", seckill.CaptchaAudioApi.as_view(), name="captcha-audio"),
    path("sales/<str:sale_id>/path", seckill.PathApi.as_view(), name="path"),
    path("sales/<str:sale_id>/buy/<str:path>", seckill.BuyApi.as_view(), name="buy"),
    path("sales/<str:sale_id>/result", seckill.ResultApi.as_view(), name="result"),
    path("orders", orders.OrderListApi.as_view(), name="orders"),
    path("orders/<str:order_no>", orders.OrderDetailApi.as_view(), name="order"),
    path("orders/<str:order_no>/pay", orders.OrderPayApi.as_view(), name="order-pay"),
    path("orders/<str:order_no>/cancel", orders.OrderCancelApi.as_view(), name="order-cancel"),
    path("merchant/goods", goods.MerchantGoodsListApi.as_view(), name="merchant-goods"),
    path("merchant/goods/<str:goods_id>", goods.MerchantGoodsDetailApi.as_view(), name="merchant-goods-detail"),
    path("merchant/sales", goods.MerchantSaleListApi.as_view(), name="merchant-sales"),
    path("merchant/sales/<str:sale_id>", goods.MerchantSaleDetailApi.as_view(), name="merchant-sale"),
    path("merchant/sales/<str:sale_id>/figures", orders.MerchantSaleFiguresApi.as_view(), name="merchant-sale-figures"),
]

app_name = "api"
urlpatterns = [
    path("v1/", include(v1)),
    path("schema/", SpectacularAPIView.as_view(authentication_classes=[], permission_classes=[]), name="schema"),
    path("docs/", SpectacularSwaggerView.as_view(url_name="api:schema", authentication_classes=[]), name="docs"),
]
