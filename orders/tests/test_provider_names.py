"""Only a provider's own module names it: the rest of the shop asks the registry
(orders.payments.providers.registry) or the provider object, so adding or removing a provider is
one module and one line of settings."""

import re
from pathlib import Path

from django.apps import apps
from django.conf import settings

import orders.payments.providers as providers_package

PROVIDERS_DIR = Path(providers_package.__file__).parent
# The package's shared modules are not a provider's own: they must not name one either.
SHARED = {"__init__", "base", "registry"}


def provider_names() -> set[str]:
    """The registered names and the provider modules' names (a provider registered only in a
    test, the dummy, has a module too)."""
    modules = {path.stem for path in PROVIDERS_DIR.glob("*.py") if path.stem not in SHARED}
    return set(settings.PAYMENT_PROVIDERS) | modules


def shop_roots() -> list[Path]:
    """The shop's own apps (those inside the repository) and the project package."""
    base = Path(settings.BASE_DIR)
    roots = {Path(config.path) for config in apps.get_app_configs() if _ours(Path(config.path), base)}
    return sorted(roots | {base / "seckill_site"})


def _ours(path: Path, base: Path) -> bool:
    """Inside the repository, and not an installed package (a virtualenv may live there too)."""
    return path.is_relative_to(base) and "site-packages" not in path.relative_to(base).parts


def exempt(path: Path) -> bool:
    parts = set(path.parts)
    if parts & {"tests", "migrations"} or path.name.startswith("test_"):
        return True
    if path.parent == PROVIDERS_DIR and path.stem not in SHARED:
        return True  # a provider's own module
    return path.is_relative_to(Path(settings.BASE_DIR) / "seckill_site" / "settings")


def files_to_check() -> list[Path]:
    found = {path for root in shop_roots() for path in root.rglob("*.py") if not exempt(path)}
    for root in [Path(settings.BASE_DIR) / "templates", *(root / "templates" for root in shop_roots())]:
        found |= set(root.rglob("*.html")) | set(root.rglob("*.txt"))
    return sorted(found)


def naming(paths: list[Path], names: set[str]) -> list[str]:
    """`path:line: text` of each line naming a provider, in any case, in code, strings or comments."""
    pattern = re.compile(r"(?<![A-Za-z])(" + "|".join(map(re.escape, sorted(names))) + ")", re.IGNORECASE)
    base = Path(settings.BASE_DIR)
    return [
        f"{path.relative_to(base)}:{number}: {line.strip()}"
        for path in paths
        for number, line in enumerate(path.read_text().splitlines(), 1)
        if pattern.search(line)
    ]


def test_the_check_sees_the_shop_and_every_provider():
    paths = files_to_check()
    assert {"alipay", "stripe", "dummy"} <= provider_names()
    base = Path(settings.BASE_DIR)
    checked = {str(path.relative_to(base)) for path in paths}
    assert {"orders/apis.py", "orders/payments/views.py", "orders/payments/admin.py"} <= checked
    assert {"orders/payments/providers/registry.py", "templates/orders/detail.html"} <= checked
    assert "orders/payments/providers/stripe.py" not in checked
    # The check itself finds a name where there is one.
    assert naming([PROVIDERS_DIR / "stripe.py"], {"stripe"})


def test_no_module_outside_a_providers_own_names_a_provider():
    found = naming(files_to_check(), provider_names())
    assert not found, "ask orders.payments.providers (the registry or the provider) instead:\n" + "\n".join(found)


def test_nothing_asks_for_a_providers_display_the_field_no_longer_has():
    # Payment.provider has no choices (the registry's names are open-ended): a template's
    # get_provider_display would render nothing, silently. provider_label says it.
    found = [str(path) for path in files_to_check() if "get_provider_display" in path.read_text()]
    assert not found, found
