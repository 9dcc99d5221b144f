"""The merchant's sale form (sales.admin): validation, the warnings and the stock as a difference."""

from django import forms
from django.contrib.admin.widgets import AdminSplitDateTime
from django.core.exceptions import ValidationError
from django.utils import timezone
from django.utils.functional import Promise
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy

from sales.models import DRAW_WINDOW_DEFAULT, Admission, Sale
from sales.selectors import sale_save_warnings
from sales.services import sale_create_refusal, sale_edit_refusal


class LabelledSplitDateTime(AdminSplitDateTime):
    """The admin's date box and time box, each named for what it holds ("Start date", "Start
    time"): the admin's visible "Date:" and "Time:" are no label of either, and two of each
    on one form would say nothing to a screen reader."""

    def __init__(self, *, date_label: str | Promise, time_label: str | Promise, attrs: dict | None = None) -> None:
        super().__init__(attrs)
        self.widgets[0].attrs["aria-label"] = date_label
        self.widgets[1].attrs["aria-label"] = time_label


class SaleForm(forms.ModelForm):
    """The sale's form with one more box: "save anyway", which appears beside the warnings
    (sales.selectors.sale_save_warnings) when a save needs the merchant's second look.

    The stock field is edited as a number and applied as a difference from the value shown,
    which the form posts back (a hidden initial value): `stock_seen` is that value on a bound
    form of an existing sale, None otherwise.
    """

    confirm = forms.BooleanField(
        label=gettext_lazy("I have read the warnings above: save anyway"), required=False, widget=forms.HiddenInput
    )

    class Meta:
        model = Sale
        fields = (
            "goods",
            "seckill_price",
            "stock_count",
            "start_at",
            "end_at",
            "admission",
            "draw_window_s",
            "entries_open_at",
        )
        widgets = {
            "start_at": LabelledSplitDateTime(
                date_label=gettext_lazy("Start date"), time_label=gettext_lazy("Start time")
            ),
            "end_at": LabelledSplitDateTime(date_label=gettext_lazy("End date"), time_label=gettext_lazy("End time")),
            "entries_open_at": LabelledSplitDateTime(
                date_label=gettext_lazy("Entries open: date"), time_label=gettext_lazy("Entries open: time")
            ),
        }

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.fields["stock_count"].show_hidden_initial = True
        # The same number before the sale ("how many to sell") and during it ("how many are
        # still to sell"): the model's "units left" reads wrong before anything was sold.
        self.fields["stock_count"].label = gettext_lazy("Units for sale")
        self.fields["stock_count"].help_text = gettext_lazy(
            "Units shoppers can still buy in this sale; units already ordered are not counted."
        )
        for name in ("admission", "draw_window_s"):
            if name in self.fields:
                self.fields[name].required = False
        pk = self.instance.pk
        self.was = Sale.objects.select_related("goods").get(pk=pk) if pk is not None else None
        self.stock_seen = self._stock_shown() if self.is_bound and self.was is not None else None
        zone = timezone.get_current_timezone_name()
        for name in ("start_at", "end_at", "entries_open_at"):
            if name in self.fields:
                self.fields[name].help_text = _("Shop time (%(zone)s).") % {"zone": zone}

    def _stock_shown(self) -> int:
        """The stock the form showed, as posted back; the stock now when the post lacks it."""
        try:
            shown = self.fields["stock_count"].to_python(self.data.get(self.add_initial_prefix("stock_count")))
        except ValidationError:
            shown = None
        return self.initial["stock_count"] if shown is None else int(shown)

    def _keep_seconds(self, name: str):
        """The admin's time input shows whole seconds in English and only hours and minutes in
        Chinese, so a form saved in Chinese would quietly move a start of 18:16:47 to 18:16:00
        (and any form would drop microseconds); a time posted back as it was shown keeps the
        value it had."""
        value, was = self.cleaned_data.get(name), getattr(self.was, name, None)
        if value is not None and was is not None:
            if value in (was.replace(microsecond=0), was.replace(second=0, microsecond=0)):
                return was
        return value

    def clean_admission(self):
        """Optional in a post (a client of the form before draw sales): as it was, or the default."""
        return self.cleaned_data.get("admission") or getattr(self.was, "admission", Admission.FCFS)

    def clean_draw_window_s(self):
        value = self.cleaned_data.get("draw_window_s")
        return value if value is not None else getattr(self.was, "draw_window_s", DRAW_WINDOW_DEFAULT)

    def clean_start_at(self):
        return self._keep_seconds("start_at")

    def clean_end_at(self):
        return self._keep_seconds("end_at")

    def clean_entries_open_at(self):
        return self._keep_seconds("entries_open_at")

    def changed_values(self, cleaned) -> set[str]:
        """The fields whose value the save would change: by value, not by what the browser
        posted (a time posted without its seconds is no change, see _keep_seconds)."""
        if self.was is None:
            return set(self.fields) - {"confirm"}
        changed = {
            name
            for name in (
                "goods",
                "seckill_price",
                "start_at",
                "end_at",
                "admission",
                "draw_window_s",
                "entries_open_at",
            )
            if name in cleaned and cleaned[name] != getattr(self.was, name)
        }
        return changed | ({"stock_count"} & set(self.changed_data))

    def clean(self):
        cleaned = super().clean()
        if self.errors:
            return cleaned
        # The values as they would be saved (clean runs before the form writes them on the instance).
        candidate = Sale(
            pk=self.instance.pk,
            goods=cleaned["goods"],
            seckill_price=cleaned.get("seckill_price"),
            stock_count=cleaned.get("stock_count"),
            start_at=cleaned.get("start_at"),
            end_at=cleaned.get("end_at"),
            admission=cleaned.get("admission") or Admission.FCFS,
            draw_window_s=cleaned.get("draw_window_s", DRAW_WINDOW_DEFAULT),
            entries_open_at=cleaned.get("entries_open_at"),
        )
        changed = self.changed_values(cleaned)
        if self.was is not None:
            refusal = sale_edit_refusal(sale=self.was, changes={name: cleaned.get(name) for name in changed})
        else:
            refusal = sale_create_refusal(sale=candidate)
        if refusal:
            raise ValidationError(refusal)
        if self.was is not None and self.stock_seen is not None and "stock_count" in changed:
            # What the sale will have left is its stock now plus the difference the merchant made.
            stock = self.was.stock_count + (cleaned["stock_count"] - self.stock_seen)
        else:
            stock = cleaned.get("stock_count") or 0
        warnings = sale_save_warnings(sale=candidate, stock_count=stock, changed=changed, was=self.was)
        if warnings and not cleaned.get("confirm"):
            self.fields["confirm"].widget = forms.CheckboxInput()
            raise ValidationError([ValidationError(w, code="warning") for w in warnings])
        return cleaned
