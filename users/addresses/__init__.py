"""The shopper's address book: its pages (views, urls), API (apis, api_urls, serializers), form,
writes (services) and reads (selectors). Its model, Address, is in users/models.py beside User,
whose mobile-number checks it shares; the place names are users.divisions."""
