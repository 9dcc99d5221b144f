from django.contrib.admin.apps import AdminConfig


class ShopAdminConfig(AdminConfig):
    """django.contrib.admin with seckill_site.admin.ShopAdminSite as `admin.site`."""

    default_site = "seckill_site.admin.ShopAdminSite"
