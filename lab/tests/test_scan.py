"""make scan's allow-list parser and wapiti report reader (lab/scan.py): the scan itself
takes minutes and stays out of make test, but what decides its verdict is checked here."""

import json

import pytest

from lab.scan import ALLOWLIST, AllowlistError, Endpoint, Finding, Report, allowlist_parse, report_read, unexpected

REPORT = {
    "vulnerabilities": {
        "Content Security Policy Configuration": [
            {"method": "GET", "path": "/api/docs/", "info": "CSP attribute style-src is weak", "level": 1,
             "parameter": "", "module": "csp"},
        ],
        "HttpOnly Flag cookie": [
            {"method": "GET", "path": "/user/index", "info": "HttpOnly flag is not set in the cookie : csrftoken",
             "level": 1, "parameter": "", "module": "cookieflags"},
        ],
        "SQL Injection": [],
    },
    "anomalies": {
        "Internal Server Error": [
            {"method": "GET", "path": "/language", "info": "The server responded with a 500 HTTP error code",
             "level": 3, "parameter": "next", "module": "xss"},
        ],
        "Resource consumption": [],
    },
    "additionals": {},
    "infos": {
        "target": "https://127.0.0.1:8100/",
        "crawled_pages_nbr": 2,
        "crawled_pages": [
            {"request": {"url": "https://127.0.0.1:8100/goods/goodsList", "method": "GET"}, "response": {}},
            {"request": {"url": "https://127.0.0.1:8100/user/login", "method": "POST"}, "response": {}},
            {"request": {"url": "https://127.0.0.1:8100/goods/goodsList", "method": "GET"}, "response": {}},
        ],
    },
}  # fmt: skip

ALLOW = """
# The CSRF cookie is read by the page's script
# (Django's documentation: HttpOnly on it buys nothing).
HttpOnly Flag cookie | /.*

# Another reason.
Content Security Policy Configuration | /goods/.*
"""


def test_the_report_gives_the_crawled_urls_findings_and_anomalies():
    report = report_read(REPORT)
    assert report.crawled == ["GET https://127.0.0.1:8100/goods/goodsList", "POST https://127.0.0.1:8100/user/login"]
    assert [(f.category, f.path) for f in report.vulnerabilities] == [
        ("Content Security Policy Configuration", "/api/docs/"),
        ("HttpOnly Flag cookie", "/user/index"),
    ]
    assert [(f.kind, f.category, f.parameter) for f in report.anomalies] == [
        ("anomaly", "Internal Server Error", "next")
    ]
    assert report_read({}) == Report([], [], [])


def test_only_allowed_findings_pass_and_anomalies_never_do():
    allowed = allowlist_parse(ALLOW)
    assert [entry.category for entry in allowed] == ["HttpOnly Flag cookie", "Content Security Policy Configuration"]
    assert "HttpOnly on it buys nothing" in allowed[0].reason
    refused = unexpected(report_read(REPORT), allowed)
    # The CSP finding is on /api/docs/, which its entry does not cover; the 500 can never be allowed.
    assert [(f.kind, f.category) for f in refused] == [
        ("anomaly", "Internal Server Error"),
        ("vulnerability", "Content Security Policy Configuration"),
    ]
    everything = allowlist_parse("# all of them, for this test\nContent Security Policy Configuration | .*")
    assert [f.category for f in unexpected(report_read(REPORT), everything)] == [
        "Internal Server Error",
        "HttpOnly Flag cookie",
    ]
    # The path must match in full, and the category exactly.
    finding = Finding("vulnerability", "HttpOnly Flag cookie", "GET", "/user/index", "", "", "cookieflags")
    partial = allowlist_parse("# only the start\nHttpOnly Flag cookie | /user")
    assert unexpected(Report([], [finding], []), partial) == [finding]
    other = allowlist_parse("# another category\nSecure Flag cookie | .*")
    assert unexpected(Report([], [finding], []), other) == [finding]


@pytest.mark.parametrize(
    "text, error",
    [
        ("HttpOnly Flag cookie | /.*", "no comment"),
        ("# a reason\n\nHttpOnly Flag cookie | /.*", "no comment"),  # a blank line ends the comment
        ("# a reason\nHttpOnly Flag cookie /.*", "expected"),
        ("# a reason\n | /.*", "expected"),
        ("# a reason\nHttpOnly Flag cookie | ", "expected"),
        ("# a reason\nHttpOnly Flag cookie | /(", "bad regular expression"),
    ],
)
def test_a_malformed_or_unexplained_entry_is_an_error(text, error):
    with pytest.raises(AllowlistError, match=error):
        allowlist_parse(text)


def test_the_shipped_allow_list_parses_and_stays_short():
    entries = allowlist_parse(ALLOWLIST.read_text())
    assert len(entries) <= 10
    assert all(len(entry.reason) >= 20 for entry in entries)


def test_the_loopback_endpoint_reports_who_fetched_a_planted_url():
    import requests

    endpoint = Endpoint()
    try:
        assert requests.get(f"{endpoint.url}get_ssrf.php?session_id=s1", timeout=5).json() == {}
        requests.get(f"{endpoint.url}ssrf/s1/42/6e657874/", timeout=5)  # "next", as hex
        answer = requests.get(f"{endpoint.url}get_ssrf.php?session_id=s1", timeout=5).json()
        assert list(answer) == ["42"] and answer["42"]["6e657874"][0]["method"] == "GET"
        assert requests.get(f"{endpoint.url}get_ssrf.php?session_id=other", timeout=5).json() == {}
        assert json.loads(requests.get(f"{endpoint.url}get_xxe.php?session_id=s1", timeout=5).text) == {}
    finally:
        endpoint.close()
