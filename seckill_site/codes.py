"""Error codes of the JSON envelope `{"code", "msg", "data"}` (numbering follows seed 000's CodeMsg)."""

from enum import Enum


class Code(Enum):
    # (code, default message, HTTP status)
    SUCCESS = (0, "success", 200)
    BAD_REQUEST = (500101, "bad request", 400)
    NOT_LOGGED_IN = (500210, "please log in first", 401)
    FORBIDDEN = (500211, "forbidden", 403)
    NOT_FOUND = (500404, "not found", 404)
    METHOD_NOT_ALLOWED = (500405, "method not allowed", 405)
    TOO_MANY_REQUESTS = (500429, "too many requests, slow down", 429)
    SERVER_BUSY = (500503, "the shop is busy, retry in a moment", 503)
    SERVER_ERROR = (500100, "server error", 500)

    LOGIN_FAILED = (500215, "wrong mobile number or password", 400)

    SOLD_OUT = (500500, "sold out", 200)
    ALREADY_BOUGHT = (500501, "you already bought this item", 200)
    NOT_STARTED = (500502, "the sale has not started yet", 200)
    ENDED = (500503, "the sale has ended", 200)
    PATH_INVALID = (500504, "invalid or expired request, solve the captcha again", 403)
    CAPTCHA_WRONG = (500505, "wrong or expired captcha answer", 400)
    TRY_AGAIN = (500506, "could not queue your request, please try again", 503)

    ORDER_NOT_FOUND = (500600, "order not found", 404)
    ORDER_STATE = (500601, "the order cannot do that in its current state", 409)

    @property
    def code(self) -> int:
        return self.value[0]

    @property
    def msg(self) -> str:
        return self.value[1]

    @property
    def status(self) -> int:
        return self.value[2]
