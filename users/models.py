import unicodedata
from typing import Any

from django.contrib.auth.models import AbstractBaseUser, BaseUserManager, PermissionsMixin
from django.core.validators import RegexValidator
from django.db import models, transaction
from django.utils import timezone
from django.utils.translation import gettext_lazy as _

# ASCII digits only: `\d` also matches Arabic-Indic, Devanagari, full-width... digits, which
# would register look-alike accounts and miss the login and rate-limit keys of the real one.
mobile_validator = RegexValidator(r"^1[0-9]{10}\Z", _("Enter an 11-digit mobile number starting with 1."))


def mobile_normalize(raw: Any) -> str:
    """The one form of a mobile number the shop knows: what pages, API and admin store, log in
    with and rate-limit on. Surrounding whitespace goes, and any Unicode decimal digit (a
    full-width "１" typed on a phone's IME, an Arabic-Indic "١") becomes its ASCII digit; a JSON
    number counts as its digits. Anything else is returned as text for the validator to refuse."""
    if isinstance(raw, bool) or raw is None:
        return ""
    if isinstance(raw, int):
        raw = str(raw)
    if not isinstance(raw, str):
        return ""
    return "".join(str(unicodedata.decimal(char)) if unicodedata.decimal(char, None) is not None else char
                   for char in raw.strip())  # fmt: skip


MERCHANTS_GROUP = "Merchants"


class UserManager(BaseUserManager["User"]):
    use_in_migrations = True

    def create_user(self, mobile: str, password: str | None = None, **extra) -> "User":
        mobile = mobile_normalize(mobile)
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

    @classmethod
    def from_db(cls, db, field_names, values):
        user = super().from_db(db, field_names, values)
        user._credentials_loaded = user._credentials()
        return user

    def _credentials(self) -> tuple[str | None, bool | None]:
        return self.__dict__.get("password"), self.__dict__.get("is_active")

    def save(self, *args, **kwargs) -> None:
        """A changed password or is_active ends every other session and token of the user once
        committed (users.services.user_auth_revoke). Here rather than in the views that change
        them, because those are many: the admin's forms, `changepassword`, a shell."""
        super().save(*args, **kwargs)
        loaded, now = getattr(self, "_credentials_loaded", None), self._credentials()
        if loaded is not None and None not in loaded and None not in now and loaded != now:
            from users.services import user_auth_revoke

            user_id = self.pk
            transaction.on_commit(lambda: user_auth_revoke(user_id=user_id))
        self._credentials_loaded = now

    @property
    def is_merchant(self) -> bool:
        return self.is_staff and self.groups.filter(name=MERCHANTS_GROUP).exists()
