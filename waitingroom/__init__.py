"""The waiting room in front of a sale: arrivals queued (shuffled before the opening, first come
after it), admitted at a pace the shop's health allows, each admitted shopper holding a signed,
short-lived pass that the buy path checks below Django (docs/waiting-room.md)."""
