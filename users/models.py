import unicodedata
from typing import Any

from django.contrib.auth.models import AbstractBaseUser, BaseUserManager, PermissionsMixin
from django.core.validators import RegexValidator
from django.db import models, transaction
from django.utils import timezone
from django.utils.translation import gettext_lazy as _

from seckill_site.text import validate_one_line
from users.divisions import place_line
from users.revocation import user_auth_revoke

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


MOBILE_TAKEN_MESSAGE = _("This mobile number is already registered.")
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
    mobile = models.CharField(_("mobile"), max_length=11, unique=True, validators=[mobile_validator])
    nickname = models.CharField(_("nickname"), max_length=40, blank=True, validators=[validate_one_line])
    avatar = models.ImageField(_("avatar"), upload_to="avatars/", blank=True)
    date_joined = models.DateTimeField(_("date joined"), default=timezone.now)
    login_count = models.PositiveIntegerField(_("login count"), default=0)
    # The language the shop texts them in (users.notices): the page's at their first login, or
    # what they chose on their notification settings; blank, the shop's (LANGUAGE_CODE).
    language = models.CharField(_("language for messages"), max_length=8, blank=True, default="")
    is_active = models.BooleanField(
        _("active"), default=True, help_text=_("Unticked: the account cannot log in, and its sessions end.")
    )
    is_staff = models.BooleanField(_("staff status"), default=False, help_text=_("May log in to the admin."))

    objects = UserManager()

    secret_fields = ("password",)  # no admin list filters, searches or sorts on it (SecretsUnqueryable)

    USERNAME_FIELD = "mobile"
    REQUIRED_FIELDS = []

    class Meta:
        verbose_name = _("user")
        verbose_name_plural = _("users")

    def __str__(self) -> str:
        return self.nickname or self.mobile

    def get_short_name(self) -> str:
        """What the admin greets with ("Welcome, <short name>"): the nickname, not a phone number."""
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
        committed (users.revocation.user_auth_revoke). Here rather than in the views that change
        them, because those are many: the admin's forms, `changepassword`, a shell."""
        super().save(*args, **kwargs)
        loaded, now = getattr(self, "_credentials_loaded", None), self._credentials()
        if loaded is not None and None not in loaded and None not in now and loaded != now:
            user_id = self.pk
            transaction.on_commit(lambda: user_auth_revoke(user_id=user_id))
        self._credentials_loaded = now

    @property
    def is_merchant(self) -> bool:
        return self.is_staff and self.groups.filter(name=MERCHANTS_GROUP).exists()


# A shopper keeps a handful of addresses, as on Tmall and JD (both cap the book at 20-25).
ADDRESSES_PER_USER = 20
postcode_validator = RegexValidator(r"^[0-9]{6}\Z", _("Enter the 6 digits of the postcode, or leave it empty."))


class Address(models.Model):
    """An entry in a shopper's address book. Orders never point here: paying copies the
    chosen address onto the order (orders.OrderAddress), so later edits rewrite no history."""

    user = models.ForeignKey(User, on_delete=models.CASCADE, related_name="addresses", verbose_name=_("user"))
    # One line each, as every name the shop writes into other formats (seckill_site/text.py).
    recipient = models.CharField(_("recipient"), max_length=32, validators=[validate_one_line])
    phone = models.CharField(_("phone"), max_length=11, validators=[mobile_validator])
    # Names from users.divisions, checked by users.addresses.forms.AddressForm; an address saved before
    # the choices were lists keeps its free text and no district until it is edited.
    region = models.CharField(_("province or region"), max_length=32)
    city = models.CharField(_("city"), max_length=32, blank=True)  # none for Hong Kong, Macau, Taiwan
    district = models.CharField(_("district"), max_length=32, blank=True)
    street = models.CharField(_("street address"), max_length=120, validators=[validate_one_line])
    postcode = models.CharField(_("postcode"), max_length=6, blank=True, validators=[postcode_validator])
    is_default = models.BooleanField(_("default address"), default=False)
    created_at = models.DateTimeField(_("created"), auto_now_add=True)
    updated_at = models.DateTimeField(_("updated"), auto_now=True)

    class Meta:
        verbose_name = _("address")
        verbose_name_plural = _("addresses")
        ordering = ("-is_default", "-updated_at", "-pk")
        constraints = [
            # At most one default per shopper; users.addresses.services keeps exactly one while any exist.
            models.UniqueConstraint(
                fields=["user"], condition=models.Q(is_default=True), name="one_default_address_per_user"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.recipient}, {self.place} {self.street}"

    @property
    def place(self) -> str:
        return place_line(region=self.region, city=self.city, district=self.district)


class NoticeKind(models.TextChoices):
    """The messages the shop texts a shopper, each of which they may turn off (NoticeSettings)."""

    SALE_REMINDER = "sale-reminder", _("sale reminders")
    DRAW_WON = "draw-won", _("draw results")
    PAY_REMINDER = "pay-reminder", _("payment reminders")
    ORDER_SHIPPED = "order-shipped", _("shipping news")
    REFUND_ANSWER = "refund-answer", _("refund answers")
    MERCHANT_REPLY = "merchant-reply", _("merchant's replies")


class NoticeSettings(models.Model):
    """Which messages a shopper wants. No row: all of them (the defaults)."""

    user = models.OneToOneField(
        User, on_delete=models.CASCADE, primary_key=True, related_name="notice_settings", verbose_name=_("user")
    )
    sale_reminders = models.BooleanField(_("sale reminders"), default=True)
    draw_results = models.BooleanField(_("draw results"), default=True)
    payment_reminders = models.BooleanField(_("payment reminders"), default=True)
    shipping_news = models.BooleanField(_("shipping news"), default=True)
    refund_answers = models.BooleanField(_("refund answers"), default=True)
    merchant_replies = models.BooleanField(_("merchant's replies"), default=True)
    updated_at = models.DateTimeField(_("updated"), auto_now=True)

    class Meta:
        verbose_name = _("notification settings")
        verbose_name_plural = _("notification settings")

    # The field that turns each kind on or off.
    FIELDS = {
        NoticeKind.SALE_REMINDER: "sale_reminders",
        NoticeKind.DRAW_WON: "draw_results",
        NoticeKind.PAY_REMINDER: "payment_reminders",
        NoticeKind.ORDER_SHIPPED: "shipping_news",
        NoticeKind.REFUND_ANSWER: "refund_answers",
        NoticeKind.MERCHANT_REPLY: "merchant_replies",
    }

    def __str__(self) -> str:
        return f"notification settings of user {self.user_id}"

    def wants(self, kind: str) -> bool:
        return bool(getattr(self, self.FIELDS[NoticeKind(kind)]))


class NoticeStatus(models.TextChoices):
    PENDING = "pending", _("pending")
    SENDING = "sending", _("sending")
    SENT = "sent", _("sent")
    SKIPPED = "skipped", _("skipped")
    FAILED = "failed", _("failed")


class Notice(models.Model):
    """One message to one shopper about one event, sent at most once (users.notices). `key`
    names the event and recipient, so whoever records it again finds this row."""

    user = models.ForeignKey(User, on_delete=models.CASCADE, related_name="notices", verbose_name=_("user"))
    kind = models.CharField(_("kind"), max_length=16, choices=NoticeKind.choices)
    key = models.CharField(_("key"), max_length=96, unique=True)
    status = models.CharField(_("status"), max_length=8, choices=NoticeStatus.choices, default=NoticeStatus.PENDING)
    # Why it was skipped or failed: the shopper's setting, a limit, the provider's error.
    reason = models.CharField(_("reason"), max_length=64, blank=True)
    text = models.TextField(_("text"))
    tries = models.PositiveSmallIntegerField(_("tries"), default=0)
    # When the message stops being worth sending (a reminder, once its sale opens); none: never.
    worth_until = models.DateTimeField(_("worth sending until"), null=True, blank=True)
    created_at = models.DateTimeField(_("created"), auto_now_add=True)
    claimed_at = models.DateTimeField(_("claimed"), null=True, blank=True)
    sent_at = models.DateTimeField(_("sent"), null=True, blank=True)

    class Meta:
        verbose_name = _("notice")
        verbose_name_plural = _("notices")
        indexes = [
            # users.notices.notices_expire: the unfinished ones whose time has passed.
            models.Index(
                fields=["worth_until"],
                condition=models.Q(status__in=["pending", "sending"]),
                name="notice_unfinished_worth_until",
            ),
        ]

    def __str__(self) -> str:
        return self.key
