"""The sale pages under /goods/ (the seed's paths): the list and a sale's detail data. The
namespace keeps the seed's prefix, `goods`: the pages, the edge and the recorded opening name
these routes so."""

from django.urls import path

from sales import views
from sales.reminders import views as reminder_views

app_name = "goods"
urlpatterns = [
    path("goodsList", views.goods_list, name="list"),
    path("getDetails/<str:sale_id>", views.goods_details, name="details"),
    path("calendar/<str:sale_id>.ics", reminder_views.sale_calendar, name="calendar"),
]
