"""This app's endpoints of the REST API, under /api/v1/ (seckill_site/api_urls.py includes them)."""

from django.urls import path

from seckill import apis as seckill

urlpatterns = [
    path("sales/<str:sale_id>/captcha", seckill.CaptchaApi.as_view(), name="captcha"),
    path("sales/<str:sale_id>/captcha/audio", seckill.CaptchaAudioApi.as_view(), name="captcha-audio"),
    path("sales/<str:sale_id>/path", seckill.PathApi.as_view(), name="path"),
    path("sales/<str:sale_id>/buy/<str:path>", seckill.BuyApi.as_view(), name="buy"),
    path("sales/<str:sale_id>/result", seckill.ResultApi.as_view(), name="result"),
]
