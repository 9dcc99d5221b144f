from django.urls import path

from goods import views

app_name = "goods"
urlpatterns = [
    path("goodsList", views.goods_list, name="list"),
    path("getDetails/<str:sale_id>", views.goods_details, name="details"),
]
