from django.urls import path

from seckill import views, waiting_list_views
from seckill.item import views as item_views

app_name = "seckill"
urlpatterns = [
    path("verifyCode", views.verify_code, name="verify-code"),
    path("verifyAudio", views.verify_audio, name="verify-audio"),
    path("path", views.seckill_path, name="path"),
    path("result", views.seckill_result, name="result"),
    path("saleState/<str:sale_id>", item_views.sale_state, name="sale_state"),
    path("shopperState", item_views.shopper_state, name="shopper_state"),
    path("draw", item_views.sale_draw, name="draw"),
    path("waitingList/<str:sale_id>", waiting_list_views.waiting_list, name="waiting_list"),
    path("<str:path>/doSeckill", views.do_seckill, name="do"),
]
