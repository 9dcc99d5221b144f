"""The sale as the shop reads it: typed values built by sales.selectors, one meaning per name.

Inside, `sale_id` is the sale event (what a shopper buys) and `goods_id` the catalogue entry it
sells. Seed 000's camelCase names appear in two places only, both plain dicts:

- the wire (`wire()`): the JSON of getDetails, the API and the pages' data, where `id` is the
  sale and `goodsId` the goods, as the seed's JSON has them;
- the cache row (`cache_row()` / `SaleView.from_cache_row`): what the sale cache and the list's
  kept rows hold in Redis, in the shape every process of a rolling deploy reads and writes. A
  dataclass is never pickled there: an older process could not read it.

The goods' texts are held in every language (`goods_names` ...), so one cached row serves every
visitor; `goods_name` and the wire are in the active language, else the other.
"""

from dataclasses import dataclass
from datetime import UTC, datetime
from decimal import Decimal
from typing import Any

from django.conf import settings

from sales.models import SaleStatus
from seckill_site.translated import Texts, text_in


@dataclass(frozen=True, slots=True)
class SaleView:
    """A sale event with its goods, as loaded from PostgreSQL (the stock is the database's)."""

    sale_id: int
    goods_id: int
    owner_id: int | None
    goods_names: Texts  # language code -> text ("" where none was written): seckill_site.translated
    goods_titles: Texts
    goods_image: str | None  # the picture's URL
    goods_details: Texts
    goods_price: Decimal
    goods_stock: int
    sale_price: Decimal
    stock_count: int  # units left by the database when loaded; the live count is sale_state's
    start_at: datetime
    end_at: datetime
    start_epoch: float
    end_epoch: float
    # A draw sale's entries: when they open (the start, or ahead of it) and close (the draw).
    entries_epoch: float | None
    draw_epoch: float | None
    stock_offered: int | None = None  # units offered in all (the stock audit), where loaded

    @property
    def goods_name(self) -> str:
        """The goods' name in the active language, else in the other."""
        return text_in(self.goods_names)

    @property
    def goods_title(self) -> str:
        return text_in(self.goods_titles)

    @property
    def goods_detail(self) -> str:
        return text_in(self.goods_details)

    @property
    def entries_at(self) -> datetime | None:
        """When a draw sale starts taking entries; None for first come, first served."""
        return datetime.fromtimestamp(self.entries_epoch, tz=UTC) if self.entries_epoch is not None else None

    @property
    def draw_at(self) -> datetime | None:
        """When a draw sale's entries close and it is drawn; None for first come, first served."""
        return datetime.fromtimestamp(self.draw_epoch, tz=UTC) if self.draw_epoch is not None else None

    @property
    def discount(self) -> int:
        """Percent off the goods' price, rounded down; 0 for goods that cost nothing."""
        if self.goods_price <= 0:
            return 0
        return int((1 - self.sale_price / self.goods_price) * 100)

    def wire(self, *, stock_count: int | None = None) -> dict[str, Any]:
        """Seed 000's goods object: `id` the sale, `goodsId` the goods, its texts in the active
        language, prices as strings, `stockCount` the given live count (else the database's)."""
        return {
            "id": self.sale_id,
            "goodsId": self.goods_id,
            "goodsName": self.goods_name,
            "goodsTitle": self.goods_title,
            "goodsImg": self.goods_image,
            "goodsDetail": self.goods_detail,
            "goodsPrice": str(self.goods_price),
            "goodsStock": self.goods_stock,
            "seckillPrice": str(self.sale_price),
            "stockCount": self.stock_count if stock_count is None else stock_count,
            "startDate": self.start_at.isoformat(),
            "endDate": self.end_at.isoformat(),
        }

    def cache_row(self) -> dict[str, Any]:
        """The plain dict the sale cache and the list's kept rows store (the shape older
        processes read: the wire's keys, in LANGUAGE_CODE, plus the texts in every language,
        the window and the owner)."""
        default = settings.LANGUAGE_CODE
        row = {
            **self.wire(),
            "goodsName": text_in(self.goods_names, default),
            "goodsTitle": text_in(self.goods_titles, default),
            "goodsDetail": text_in(self.goods_details, default),
            "goodsNames": dict(self.goods_names),
            "goodsTitles": dict(self.goods_titles),
            "goodsDetails": dict(self.goods_details),
            "ownerId": self.owner_id,
            "startEpoch": self.start_epoch,
            "endEpoch": self.end_epoch,
            "startAt": self.start_at,
            "endAt": self.end_at,
            "entriesEpoch": self.entries_epoch,
            "drawEpoch": self.draw_epoch,
        }
        if self.stock_offered is not None:
            row["stockOffered"] = self.stock_offered
        return row

    @classmethod
    def from_cache_row(cls, row: dict[str, Any]) -> "SaleView":
        """The view of a cache row, whichever process of a rolling deploy stored it (one that
        kept a single language stored it in LANGUAGE_CODE)."""
        default = settings.LANGUAGE_CODE
        return cls(
            sale_id=row["id"],
            goods_id=row["goodsId"],
            owner_id=row.get("ownerId"),
            goods_names=row.get("goodsNames") or {default: row["goodsName"]},
            goods_titles=row.get("goodsTitles") or {default: row["goodsTitle"]},
            goods_image=row["goodsImg"],
            goods_details=row.get("goodsDetails") or {default: row["goodsDetail"]},
            goods_price=Decimal(row["goodsPrice"]),
            goods_stock=row["goodsStock"],
            sale_price=Decimal(row["seckillPrice"]),
            stock_count=row["stockCount"],
            start_at=row["startAt"],
            end_at=row["endAt"],
            start_epoch=row["startEpoch"],
            end_epoch=row["endEpoch"],
            entries_epoch=row.get("entriesEpoch"),
            draw_epoch=row.get("drawEpoch"),
            stock_offered=row.get("stockOffered"),
        )


@dataclass(frozen=True, slots=True)
class SaleEntries:
    """A draw sale's entries by the shop's clock (sales.selectors.sale_entries)."""

    state: str  # ENTRIES_SOON, ENTRIES_OPEN or ENTRIES_CLOSED
    ahead: bool  # taken before the start (pre-registration)
    opens_in: int  # seconds to the opening, 0 once open
    closes_in: int  # seconds to the draw, 0 once drawn
    opens_at: datetime
    closes_at: datetime


@dataclass(frozen=True, slots=True)
class SaleDetail:
    """Seed 000's detail: the sale, its status and countdown by the shop's clock, the live stock."""

    sale: SaleView
    status: SaleStatus
    remain_seconds: int  # to the start; 0 while on; -1 once ended
    stock_left: int  # the live count (the database's where not loaded for selling)

    def wire(self) -> dict[str, Any]:
        """getDetails' `data` without the user."""
        return {
            "seckillStatus": int(self.status),
            "remainSeconds": self.remain_seconds,
            "goods": self.sale.wire(stock_count=self.stock_left),
        }


@dataclass(frozen=True, slots=True)
class SalePage:
    """The detail and what only the item page shows."""

    detail: SaleDetail
    ends_in: int | None  # seconds to the end while on, else None
    claimed: int | None  # percent of the units gone; None when not known
    entries: SaleEntries | None  # a draw sale's; None for first come, first served


@dataclass(frozen=True, slots=True)
class SaleListRow:
    """A row of the public list: the sale with its live stock, status and share claimed."""

    sale: SaleView
    stock_left: int
    status: SaleStatus
    remain_seconds: int
    claimed: int | None
    # A draw sale's entries when the row was read: "ahead" (not open yet), "open", else "".
    entries: str = ""

    def wire(self) -> dict[str, Any]:
        """The row as the API lists it (sales.serializers.SaleSerializer)."""
        goods = self.sale.wire()
        return {
            **{key: goods[key] for key in _LIST_KEYS},
            "stockLeft": self.stock_left,
            "status": int(self.status),
            "remainSeconds": self.remain_seconds,
            "startDate": goods["startDate"],
            "endDate": goods["endDate"],
            "discount": self.sale.discount,
        }


_LIST_KEYS = ("id", "goodsId", "goodsName", "goodsTitle", "goodsImg", "goodsPrice", "seckillPrice")
