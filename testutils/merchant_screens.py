"""The merchant's admin screens, each as (method, URL, form): the admin's translation tests walk
them in zh-Hans and the browser tests check their accessibility, on the `shop` fixture's data."""

MERCHANT_SCREENS = [
    ("get", "/admin/"),
    ("get", "/admin/goods/"),
    ("get", "/admin/goods/goods/"),
    ("get", "/admin/goods/goods/?q=%E8%8C%B6"),
    ("get", "/admin/goods/goods/add/"),
    ("get", "/admin/goods/goods/{goods}/change/"),
    ("get", "/admin/goods/goods/{goods}/delete/"),  # refused: its sale has orders
    ("get", "/admin/goods/goods/{spare}/delete/"),  # the confirmation
    ("get", "/admin/sales/sale/"),
    ("get", "/admin/sales/sale/?status=1"),
    ("get", "/admin/sales/sale/?status=0&goods__id__exact={goods}"),
    ("get", "/admin/sales/sale/add/"),
    ("get", "/admin/sales/sale/{sale}/change/"),
    ("get", "/admin/sales/sale/{sale}/delete/"),  # refused: it has orders
    ("get", "/admin/sales/sale/{later}/delete/"),  # the confirmation
    ("get", "/admin/sales/sale/{sale}/history/"),
    ("get", "/admin/orders/order/sale/{sale}/live/"),
    ("get", "/admin/orders/order/"),
    ("get", "/admin/orders/order/?sale__id__exact={sale}&status=paid"),
    ("get", "/admin/orders/order/{paid}/change/"),
    ("get", "/admin/orders/order/{unpaid}/change/"),
    ("get", "/admin/orders/order/{delivered}/change/"),
    ("get", "/admin/orders/order/{asked}/change/"),
    ("get", "/admin/orders/order/{paid}/ship/"),
    ("post", "/admin/orders/order/{paid}/ship/", {"carrier": "", "tracking_no": "x;y"}),
    ("get", "/admin/orders/order/{asked}/refund-request/"),
    ("post", "/admin/orders/order/{asked}/refund-request/", {"decision": "decline", "answer": ""}),
    ("get", "/admin/orders/order/ship.csv/"),
    ("get", "/admin/orders/order/?refund_request=open"),
    ("get", "/admin/orders/order/?status__exact=shipped"),
    ("get", "/admin/sales/stockaudit/"),
    ("get", "/admin/sales/stockaudit/?sale__id__exact={sale}&reason=purchase"),
    ("get", "/admin/sales/stockaudit/{audit}/change/"),
    ("get", "/admin/waitingroom/"),
    ("get", "/admin/waitingroom/waitingroom/"),
    ("get", "/admin/waitingroom/waitingroom/add/"),
    ("get", "/admin/waitingroom/waitingroom/{room}/change/"),
    ("get", "/admin/waitingroom/waitingroomaction/"),
    ("get", "/admin/waitingroom/waitingroomaction/?sale__id__exact={sale}"),
    ("get", "/admin/users/user/registrations/"),
    ("get", "/admin/password_change/"),
    # Saving a sale that needs a second look: the warnings and the "save anyway" box.
    ("post", "/admin/sales/sale/{sale}/change/", {"seckill_price": "5.00", "stock_count": 40}),
    ("post", "/admin/sales/sale/add/", {"stock_count": 500}),
    # A waiting room's settings refused: the form's errors.
    (
        "post",
        "/admin/waitingroom/waitingroom/{room}/change/",
        {"enabled": "on", "admit_per_minute": "", "pass_minutes": 0},
    ),
    # The bulk delete's confirmation, refused for the sale with orders.
    ("post", "/admin/sales/sale/", {"action": "delete_selected", "_selected_action": ["{sale}", "{later}"]}),
    ("post", "/admin/sales/sale/", {"action": "delete_selected", "_selected_action": ["{later}"]}),
]
