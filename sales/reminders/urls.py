"""A shopper's own reminders, mounted at /reminders/ outside the language prefixes: the answers
are the shopper's, never everybody's (seckill_site.shared)."""

from django.urls import path

from sales.reminders import views as reminder_views

app_name = "reminders"
urlpatterns = [path("<str:sale_id>", reminder_views.sale_reminder, name="sale")]
