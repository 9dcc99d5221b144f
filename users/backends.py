from django.contrib.auth.backends import ModelBackend


class MobileBackend(ModelBackend):
    """ModelBackend keyed on `mobile` (the USERNAME_FIELD); kept explicit so the login rule is visible."""
