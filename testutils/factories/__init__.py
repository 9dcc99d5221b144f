"""Rows for tests, one module per app (users, goods, sales, orders): each make_* helper makes
what the app's own services would, so that a test starts from a state the shop can be in."""
