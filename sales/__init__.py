"""A sale event: its model, its state in Redis (sale_state), its writes, reads, pages and admin."""
