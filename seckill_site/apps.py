from django.contrib.admin.apps import AdminConfig


class ShopAdminConfig(AdminConfig):
    """django.contrib.admin with users.admin_site.ShopAdminSite as `admin.site`."""

    default_site = "users.admin_site.ShopAdminSite"
