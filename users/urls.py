from django.urls import path

from users import views

app_name = "users"
urlpatterns = [
    path("index", views.login_page, name="index"),
    path("login", views.login_submit, name="login"),
    path("logout", views.logout_view, name="logout"),
    path("register", views.register, name="register"),
    path("me", views.me, name="me"),
]
