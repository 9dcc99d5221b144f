"""The shopper's address book pages: list and add, edit, delete, make default. Server-rendered
like the other shop pages; the API (users.apis) offers the same through users.services."""

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import render
from django.utils.translation import gettext as _
from django.views.decorators.http import require_http_methods, require_POST

from seckill_site.http import next_path, redirect_target
from users import selectors, services
from users.forms import AddressForm
from users.http import signed_in
from users.models import ADDRESSES_PER_USER, Address

ADDRESSES_URL = "/user/addresses"


def _next(request: HttpRequest) -> str:
    """Where to go after a change: back to the order being paid when it sent the shopper here
    (a path of this site only, seckill_site.http.next_path), else ""."""
    return next_path(request.POST.get("next") or request.GET.get("next"), "")


def _back(request: HttpRequest) -> HttpResponse:
    return redirect_target(request.POST.get("next") or request.GET.get("next"), ADDRESSES_URL)


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
    if request.method == "POST":
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
        context = {"form": form, "address": address, "next": _next(request)}
        return render(request, "users/address_edit.html", context, status=400)
    form = AddressForm(instance=address, initial={"is_default": address.is_default})
    return render(request, "users/address_edit.html", {"form": form, "address": address, "next": _next(request)})


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
