"""The item page: its view and the answers it asks for (views), its address under /goods/detail/
(urls) and the shopper's panels it carries (panels)."""
