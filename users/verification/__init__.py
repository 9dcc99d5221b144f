"""Mobile numbers verified by text message: services (sending and checking codes, the limits
that keep strangers from spending a number's budget), forms, pages and API."""
