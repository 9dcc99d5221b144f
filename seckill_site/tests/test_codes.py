"""The envelope's codes are a contract with every client: unique, and never renumbered."""

from collections import Counter

from seckill_site.codes import Code

# Codes clients already read (the pages' scripts, the apps, the balancer's busy answer in
# deploy/haproxy.cfg): each keeps its number for good. A new code is added here when it ships.
PUBLISHED = {
    "SUCCESS": 0,
    "SERVER_ERROR": 500100,
    "BAD_REQUEST": 500101,
    "NOT_LOGGED_IN": 500210,
    "FORBIDDEN": 500211,
    "LOGIN_FAILED": 500215,
    "NOT_FOUND": 500404,
    "METHOD_NOT_ALLOWED": 500405,
    "TOO_LARGE": 500413,
    "TOO_MANY_REQUESTS": 500429,
    "SALE_LIMIT": 500430,
    "SOLD_OUT": 500500,
    "ALREADY_BOUGHT": 500501,
    "NOT_STARTED": 500502,
    "SERVER_BUSY": 500503,
    "PATH_INVALID": 500504,
    "CAPTCHA_WRONG": 500505,
    "TRY_AGAIN": 500506,
    "ENTERED": 500507,
    "DRAW_PENDING": 500508,
    "ENTRIES_CLOSED": 500509,
    "ENDED": 500510,
    "ORDER_NOT_FOUND": 500600,
    "ORDER_STATE": 500601,
    "ADDRESS_NEEDED": 500602,
    "PAYMENT_UNAVAILABLE": 500603,
    "ADDRESS_BOOK_FULL": 500610,
    "REMINDER_REFUSED": 500620,
}


def test_no_two_answers_share_a_code():
    """A shared code makes two answers one to a client: "busy, retry" read as "the sale ended"."""
    counts = Counter(member.code for member in Code.__members__.values())
    shared = {
        number: sorted(name for name, member in Code.__members__.items() if member.code == number)
        for number, seen in counts.items()
        if seen > 1
    }
    assert shared == {}


def test_no_published_code_changes_its_number():
    numbers = {name: member.code for name, member in Code.__members__.items()}
    assert {name: numbers.get(name) for name in PUBLISHED} == PUBLISHED


def test_no_name_is_an_alias_of_another():
    """An Enum member whose value equals another's is silently the same member."""
    assert len(Code.__members__) == len(list(Code))
