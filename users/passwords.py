"""The shop's password rules, spoken in the shopper's language."""

from django.contrib.auth import password_validation
from django.utils.translation import ngettext


class MinimumLengthValidator(password_validation.MinimumLengthValidator):
    """Django's, with the "too short" message under the msgid its translations know.

    Django 5.2 words that message with a bare `%d`, and its Chinese catalogue translates only the
    earlier `%(min_length)d` wording, so a Chinese page showed it in English."""

    def get_error_message(self) -> str:
        return ngettext(
            "This password is too short. It must contain at least %(min_length)d character.",
            "This password is too short. It must contain at least %(min_length)d characters.",
            self.min_length,
        ) % {"min_length": self.min_length}
