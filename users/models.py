from django.contrib.auth.models import AbstractBaseUser, BaseUserManager, PermissionsMixin
from django.core.validators import RegexValidator
from django.db import models
from django.utils import timezone
from django.utils.translation import gettext_lazy as _

mobile_validator = RegexValidator(r"^1\d{10}$", _("Enter an 11-digit mobile number starting with 1."))

MERCHANTS_GROUP = "Merchants"


class UserManager(BaseUserManager["User"]):
    use_in_migrations = True

    def create_user(self, mobile: str, password: str | None = None, **extra) -> "User":
        if not mobile:
            raise ValueError("A mobile number is required.")
        user = self.model(mobile=mobile, **extra)
        user.set_password(password)
        user.save(using=self._db)
        return user

    def create_superuser(self, mobile: str, password: str | None = None, **extra) -> "User":
        extra.setdefault("is_staff", True)
        extra.setdefault("is_superuser", True)
        return self.create_user(mobile, password, **extra)


class User(AbstractBaseUser, PermissionsMixin):
    mobile = models.CharField(max_length=11, unique=True, validators=[mobile_validator])
    nickname = models.CharField(max_length=40, blank=True)
    avatar = models.ImageField(upload_to="avatars/", blank=True)
    date_joined = models.DateTimeField(default=timezone.now)
    login_count = models.PositiveIntegerField(default=0)
    is_active = models.BooleanField(default=True)
    is_staff = models.BooleanField(default=False)

    objects = UserManager()

    USERNAME_FIELD = "mobile"
    REQUIRED_FIELDS: list[str] = []

    def __str__(self) -> str:
        return self.nickname or self.mobile

    @property
    def is_merchant(self) -> bool:
        return self.is_staff and self.groups.filter(name=MERCHANTS_GROUP).exists()
