from django.urls import path

from goods import reminder_views, views

app_name = "goods"
urlpatterns = [
    path("goodsList", views.goods_list, name="list"),
    path("getDetails/<str:sale_id>", views.goods_details, name="details"),
    path("calendar/<str:sale_id>.ics", reminder_views.sale_calendar, name="calendar"),
]
