"""What the catalogue tells the apps above it. Goods know nothing of the sales that put them on;
the sales app listens (sales.receivers) so that a renamed item reaches its sales' pages and a
deletion takes its sales with it."""

from django.dispatch import Signal

# Sent once an edit of goods is committed; `goods_id` is the row's id.
goods_changed = Signal()

# Sent inside the deletion's transaction, before the row goes; `goods` is the instance. A
# receiver that must refuse raises GoodsInUse, and nothing is deleted.
goods_deleting = Signal()
