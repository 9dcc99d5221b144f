"""Taking money for an order: attempts at its providers (providers), their notifications, closing them
before an unpaid order's unit goes back on sale, refunds, and reconciliation.

The life of an order's money, each move a conditional change under the order's row lock
(`select_for_update`), so a late or repeated caller finds the state moved on and does nothing:

| from                                | event                          | to                                      |
|-------------------------------------|--------------------------------|-----------------------------------------|
| order unpaid, before its deadline   | shopper goes to a cashier      | + payment open                          |
| payment open (or closed), unpaid    | provider says paid             | payment succeeded, order paid           |
| payment open/closed, order cancelled| provider says paid             | payment refunding + refund (late)       |
| payment open/closed, order paid     | provider says paid             | payment refunding + refund (duplicate)  |
| payment open, not failed            | provider says the try failed   | payment open, failed (never tried again) |
| payment open                        | provider confirms the close    | payment closed                          |
| payment open, the sale's hold over  | provider unreachable/refusing  | payment closed, unconfirmed             |
| payment closed, unconfirmed         | provider confirms the close    | payment closed (confirmed)              |
| order unpaid, no payment open       | cancel or expiry               | order cancelled, unit back on sale      |
| order paid                          | merchant refunds               | order refunded, payment refunding + refund |
| refund pending                      | provider confirms the refund   | refund succeeded, payment refunded      |

Starting and "provider says paid" are in services (a notification, a query's answer, a card
confirmed), closing in closing, the cancel in orders.services.order_cancel, refunds in refunds.

A notification is verified by its provider (signature, app, seller), checked against our
attempt (trade number, reference, amount, currency) and stored once per provider event: a
duplicate finds the row and changes nothing. Every sweep takes each attempt on its own
(services.payment_isolated): one the provider refuses, or the shop fails on, is set aside with
a pause and never stops the rest. The invariants are orders.payments.reconcile's money_check.
"""
