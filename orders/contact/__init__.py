"""Contact the merchant: a thread of messages on each paid order between its shopper and the
goods' merchant. The model and what a message may be (models), the rules (services), the
shopper's form (views, urls; the form itself is orders.forms', the thread's reads
orders.selectors', which the order page uses), the merchant's answers in the order admin
(admin) and the text that tells the shopper the merchant answered (notices)."""
