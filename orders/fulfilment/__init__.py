"""After the payment: shipping an order (one, or many from a CSV file), the shopper's receipt
and refund requests, the merchant's answers. Models (Shipment, RefundRequest), the moves
(services), the shopper's pages (views, urls), the merchant's desk (admin) and the CSV import
(shipping_csv). The moves and their rules are written in services."""
