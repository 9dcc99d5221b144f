"""The shopper's address book pages: list and add, edit, delete, make default. Server-rendered
like the other shop pages; the API (users.addresses.apis) offers the same through the services."""

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import render
from django.utils.translation import gettext as _
from django.views.decorators.cache import cache_control
from django.views.decorators.http import etag, require_GET, require_http_methods, require_POST

from seckill_site.http import next_path, redirect_target
from users import divisions
from users.addresses import selectors, services
from users.addresses.forms import AddressForm
from users.http import signed_in
from users.models import ADDRESSES_PER_USER, Address

ADDRESSES_URL = "/user/addresses"
# The button that narrows the province / city / district selects on a page without its script.
DIVISIONS_SHOW = "divisions_show"


def _next(request: HttpRequest) -> str:
    """Where to go after a change: back to the order being paid when it sent the shopper here
    (a path of this site only, seckill_site.http.next_path), else ""."""
    return next_path(request.POST.get("next") or request.GET.get("next"), "")


def _back(request: HttpRequest) -> HttpResponse:
    return redirect_target(request.POST.get("next") or request.GET.get("next"), ADDRESSES_URL)


def _shown_again(request: HttpRequest) -> AddressForm | None:
    """The form again, starting from what was posted, when the shopper pressed the button that
    shows the cities and districts of their choice (no script to do it): nothing is checked
    or saved yet."""
    if DIVISIONS_SHOW not in request.POST:
        return None
    return AddressForm(initial=request.POST.dict())


def _own_address(request: HttpRequest, address_id: str):
    address = selectors.address_of_user(user=signed_in(request), address_id=address_id)
    if address is None:
        raise Http404("no such address")
    return address


@require_http_methods(["GET", "POST"])
@login_required
def address_book(request: HttpRequest) -> HttpResponse:
    """The addresses, and the form that adds one (posted here)."""
    addresses = list(selectors.addresses_of_user(user=signed_in(request)))
    form, status = AddressForm(), 200
    if request.method == "POST" and (shown := _shown_again(request)) is not None:
        form = shown
    elif request.method == "POST":
        form = AddressForm(request.POST)
        if form.is_valid():
            try:
                services.address_create(user=signed_in(request), **form.cleaned_data_for_service())
            except services.AddressBookFull as full:
                form.add_error(None, str(full))
            else:
                messages.success(request, _("Address saved."))
                return _back(request)
        status = 400
    context = {
        "addresses": addresses,
        "form": form,
        "next": _next(request),
        "full": len(addresses) >= ADDRESSES_PER_USER,
        "limit": ADDRESSES_PER_USER,
    }
    return render(request, "users/addresses.html", context, status=status)


@require_http_methods(["GET", "POST"])
@login_required
def address_edit(request: HttpRequest, address_id: str) -> HttpResponse:
    address = _own_address(request, address_id)
    # An address saved before the lists keeps free text: the page says what it was.
    unlisted = divisions.division_errors(region=address.region, city=address.city, district=address.district)
    base = {"address": address, "next": _next(request), "unlisted": address.place if unlisted else ""}
    if request.method == "POST" and (shown := _shown_again(request)) is not None:
        return render(request, "users/address_edit.html", {**base, "form": shown})
    if request.method == "POST":
        form = AddressForm(request.POST)  # validates only: the service applies the changes
        if form.is_valid():
            changes = form.cleaned_data_for_service()
            if not changes["is_default"]:
                changes.pop("is_default")  # unticking is no way to have no default
            try:
                services.address_update(address=address, changes=changes)
            except Address.DoesNotExist:
                raise Http404("no such address") from None
            messages.success(request, _("Address saved."))
            return _back(request)
        return render(request, "users/address_edit.html", {**base, "form": form}, status=400)
    form = AddressForm(instance=address, initial={"is_default": address.is_default})
    return render(request, "users/address_edit.html", {**base, "form": form})


@require_POST
@login_required
def address_delete(request: HttpRequest, address_id: str) -> HttpResponse:
    services.address_delete(address=_own_address(request, address_id))
    messages.success(request, _("Address deleted."))
    return _back(request)


@require_POST
@login_required
def address_default(request: HttpRequest, address_id: str) -> HttpResponse:
    try:
        services.address_default_set(address=_own_address(request, address_id))
    except Address.DoesNotExist:
        raise Http404("no such address") from None
    messages.success(request, _("Default address changed."))
    return _back(request)


@require_GET
@cache_control(public=True, max_age=86400)
@etag(lambda request: divisions.divisions_json()[1])
def divisions_data(request: HttpRequest) -> HttpResponse:
    """The provinces, cities and districts (users.divisions) for the address form's script and
    for API clients: the same bytes for everyone, so any cache may keep them for a day."""
    return HttpResponse(divisions.divisions_json()[0], content_type="application/json")
