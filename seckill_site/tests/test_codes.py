"""The envelope's codes are a contract with every client: unique across every app's codes
module, and never renumbered."""

from seckill_site.codes import EnvelopeCode, clashes, every_code

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
    "IN_WAITING_ROOM": 500700,
}


def test_no_two_answers_share_a_code():
    """A shared code makes two answers one to a client: "busy, retry" read as "the sale ended"."""
    assert clashes(every_code()) == {}


def test_every_apps_codes_are_counted():
    """The core's and each app's codes module, so a clash between two apps is seen."""
    assert {type(member).__module__ for member in every_code()} == {
        "seckill_site.codes",
        "users.codes",
        "sales.codes",
        "seckill.codes",
        "orders.codes",
        "waitingroom.codes",
    }


def test_a_number_two_apps_share_is_a_clash():
    """Two apps' enums apart from each other: Enum checks neither against the other."""

    class One(EnvelopeCode):
        A = (1, "a", 200)
        B = (2, "b", 200)

    class Two(EnvelopeCode):
        C = (2, "c", 200)

    assert clashes([*One, *Two]) == {2: ["One.B", "Two.C"]}
    assert not {One, Two} & {type(member) for member in every_code()}  # a test's enums are no app's


def test_no_published_code_changes_its_number():
    numbers = {member.name: member.code for member in every_code()}
    assert {name: numbers.get(name) for name in PUBLISHED} == PUBLISHED


def test_every_code_is_published():
    """A code no test pins could be renumbered unseen; a new code is added to PUBLISHED as it ships."""
    assert sorted(member.name for member in every_code() if member.name not in PUBLISHED) == []


def test_no_two_apps_name_a_code_alike():
    """Codes are named by their names here and in the lab's reports: one name, one code."""
    names = [member.name for member in every_code()]
    assert sorted(name for name in set(names) if names.count(name) > 1) == []


def test_no_name_is_an_alias_of_another():
    """An Enum member whose value equals another's is silently the same member."""
    for enum in {type(member) for member in every_code()}:
        assert len(enum.__members__) == len(list(enum)), enum
