"""A sale's cache keys, with their lifetimes (seconds): its row, its draw's published lists and
summary, and the goods list. Most are read and written through Django's cache, which adds its
own KEY_PREFIX (settings); the locks are keys of the raw client and carry PREFIX themselves."""

from seckill_site.redis.keys import PREFIX

# A sale's cached row: fresh, then served stale while the lock's holder re-reads it.
SALE_CACHE_TTL = 30
SALE_CACHE_STALE_TTL = 30
# Past that, kept only for when PostgreSQL cannot answer (a failover): an edit drops the row, so
# the kept copy is the last one committed; once served so, it is fresh again this long.
SALE_CACHE_KEEP_TTL = 60 * 60
SALE_CACHE_RETRY_SECONDS = 2
SALE_CACHE_LOCK_TTL = 5
# A miss for an unknown sale id is remembered briefly (jittered) so repeated misses skip PostgreSQL.
SALE_MISSING_TTL = 30
GOODS_LIST_LOCK_TTL = 5


def sale_cache(sale_id: int) -> str:
    """(fresh until, by Redis's clock; the row: a plain dict, sales.read_model.SaleView.cache_row).
    "v2": a rolling deploy's old processes read v1."""
    return f"goods:sale:v2:{sale_id}"


def sale_missing(sale_id: int) -> str:
    return f"goods:sale-missing:{sale_id}"


def draw_public(sale_id: int) -> str:
    """A made draw's published lists: never changing and maybe megabytes, read once from PostgreSQL."""
    return f"seckill:draw-public:v1:{sale_id}"


def draw_summary(sale_id: int) -> str:
    """(fresh until, by Redis's clock; a draw's public summary, no entrant list), for the item
    page's refresh every few seconds. "v2": a rolling deploy's old processes read v1."""
    return f"seckill:draw-summary:v2:{sale_id}"


def draw_entry(sale_id: int, user_id: int) -> str:
    """A shopper's place in a made draw's entrant list: never changing once drawn."""
    return f"seckill:draw-entry:v1:{sale_id}:{user_id}"


def goods_list_html(language: str) -> str:
    return f"goods:list:html:{language}"


def goods_list_rows() -> str:
    """The list's rows and units offered as PostgreSQL last gave them (goods.selectors.sales_for_list)."""
    return "goods:list:rows:v1"


# Locks, keys of the raw client.


def sale_cache_lock(sale_id: int) -> str:
    return f"{PREFIX}goods:sale-cache-lock:{sale_id}"


def goods_list_lock(language: str) -> str:
    return f"{PREFIX}goods:list:lock:{language}"
