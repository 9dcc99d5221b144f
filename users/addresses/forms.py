from django import forms
from django.utils.translation import gettext_lazy as _

from users import divisions
from users.fields import MobileField
from users.models import Address, mobile_normalize


class DivisionSelect(forms.Select):
    """A select whose options are the names of one level of users.divisions, set by the form
    for what is chosen above it; `data-level` is how static/js/divisions.js finds it."""

    def __init__(self, *, level: str, autocomplete: str):
        super().__init__(attrs={"data-level": level, "autocomplete": autocomplete})


class AddressForm(forms.ModelForm):
    """An address book entry, on the shopper's page and in the API (users.addresses.apis). The province,
    city and district are names from users.divisions: each select offers the names under the
    one above it as bound, so the page works without its script, and `clean` checks the three
    together whatever was posted."""

    phone = MobileField(label=_("Phone"))
    is_default = forms.BooleanField(label=_("Use as my default address"), required=False)

    class Meta:
        model = Address
        # is_default is the form's own field: the service decides what a default means.
        fields = ("recipient", "phone", "region", "city", "district", "street", "postcode")
        labels = {"region": _("Province"), "city": _("City"), "district": _("District or county")}
        widgets = {
            "recipient": forms.TextInput(attrs={"autocomplete": "shipping name"}),
            "region": DivisionSelect(level="province", autocomplete="shipping address-level1"),
            "city": DivisionSelect(level="city", autocomplete="shipping address-level2"),
            "district": DivisionSelect(level="district", autocomplete="shipping address-level3"),
            "street": forms.TextInput(attrs={"autocomplete": "shipping street-address"}),
            "postcode": forms.TextInput(attrs={"autocomplete": "shipping postal-code", "inputmode": "numeric"}),
        }

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.fields["phone"].widget.input_type = "tel"
        self.fields["phone"].widget.attrs.update({"autocomplete": "shipping tel"})
        for name in ("recipient", "region", "city", "district", "street"):
            field = self.fields[name]
            if isinstance(field, forms.CharField):
                field.strip = True
        # Which levels below the province are required depends on it: clean() says, per field.
        self.fields["city"].required = self.fields["district"].required = False
        for name in ("region", "city", "district"):
            self.fields[name].widget.attrs.pop("maxlength", None)  # a select has none
        self._division_choices()

    def _chosen(self, name: str) -> str:
        value = self.data.get(name) if self.is_bound else self.initial.get(name)
        return value.strip() if isinstance(value, str) else ""

    def _division_choices(self) -> None:
        """Each select's options: the names under what is chosen above it (a page without the
        script re-renders through the "show" button to narrow them). A municipality's one city
        starts chosen on a form not yet posted. The prompts are there for the script too."""
        region, city = self._chosen("region"), self._chosen("city")
        cities = divisions.cities(region)
        if len(cities) == 1 and not city and not self.is_bound:
            city = self.initial["city"] = cities[0]
        levels = {
            "region": (divisions.provinces(), _("Choose a province"), _("Choose a province"), True),
            "city": (cities, _("Choose a city"), _("No cities to choose"), region in divisions.provinces()),
            "district": (
                divisions.districts(region, city),
                _("Choose a district"),
                _("No districts to choose"),
                city in cities or (region in divisions.provinces() and not cities),
            ),
        }
        for name, (names, prompt, none, above_chosen) in levels.items():
            widget = self.fields[name].widget
            # "None to choose" only once the level above is chosen; before that, the prompt.
            widget.choices = [("", prompt if names or not above_chosen else none), *((n, n) for n in names)]
            widget.attrs.update({"data-prompt": prompt, "data-none": none})
            widget.attrs.pop("disabled", None)
            if not names and name != "region":
                widget.attrs["disabled"] = True  # nothing to choose; a disabled select posts nothing

    def clean(self):
        cleaned = super().clean()
        if not any(self.has_error(name) for name in ("region", "city", "district")):
            problems = divisions.division_errors(
                region=cleaned.get("region", ""), city=cleaned.get("city", ""), district=cleaned.get("district", "")
            )
            for name, message in problems.items():
                self.add_error(name, message)
        return cleaned

    def clean_postcode(self) -> str:
        # Full-width digits from a phone's IME are digits, as in a mobile number.
        return mobile_normalize(self.cleaned_data.get("postcode", ""))

    def cleaned_data_for_service(self) -> dict:
        return {name: self.cleaned_data[name] for name in (*self.Meta.fields, "is_default")}
