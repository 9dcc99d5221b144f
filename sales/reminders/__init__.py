"""Shoppers' reminders of a sale: the texts before it opens or when a unit comes back, the
calendar file, and the pages that set them (mounted at /reminders/)."""
