"""The waiting page's status poll and the room's published shuffle: JSON with no words in it,
so one URL for every language."""

from django.urls import path

from waitingroom import views

app_name = "waitingroom-status"
urlpatterns = [
    path("<str:sale_id>/status", views.status, name="status"),
    path("<str:sale_id>/shuffle", views.shuffle, name="shuffle"),
]
