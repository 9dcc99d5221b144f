"""The test run's hooks: the Hypothesis profile, the `processes` mark, CI's missing packages and
the fuzz tally. The fixtures are testutils.fixtures'; everything runs against real PostgreSQL and
Redis."""

import sys

import pytest
from hypothesis import settings as hypothesis_settings

from tools.missing import on_ci, packages_named

# The fixtures every app's tests share (testutils/fixtures.py).
pytest_plugins = ["testutils.fixtures"]

# Hypothesis's per-example deadline is a timing test: on a busy two-core machine an example
# that renders a picture overran it at random. The properties here are about results; speed
# is `make bench`'s.
hypothesis_settings.register_profile("shop", deadline=None)
hypothesis_settings.load_profile("shop")

# Fixtures that start server processes: a web server and a Celery worker (testutils.fixtures), a
# private redis-server behind a fault proxy (seckill_site/tests/test_redis_breaker.py), a web
# server and a worker reaching PostgreSQL through one (seckill_site/tests/test_database_outage.py)
# and a primary and its replica (seckill/tests/test_durable.py). Their tests are marked `processes`,
# which `make test-fast` leaves out; a test that starts one itself takes @pytest.mark.processes.
PROCESS_FIXTURES = {
    "celery_worker",
    "gunicorn_server",
    "proxied_redis",
    "shop_on_proxied_postgres",
    "pair",
    "tls_server",
}


def pytest_collection_modifyitems(items) -> None:
    for item in items:
        if PROCESS_FIXTURES.intersection(getattr(item, "fixturenames", ())):
            item.add_marker(pytest.mark.processes)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    """Under CI=true a test skipped for want of a Debian package (tools.missing) fails, naming
    the package: a tier that did not run must not pass for one that did."""
    outcome = yield
    report = outcome.get_result()
    if not (report.skipped and on_ci()) or hasattr(report, "wasxfail"):
        return
    reason = report.longrepr[2] if isinstance(report.longrepr, tuple) else str(report.longrepr)
    packages = packages_named(reason)
    if packages:
        report.outcome = "failed"
        report.longrepr = f"CI=true and this tier did not run: install {' '.join(packages)} ({reason})"


def pytest_terminal_summary(terminalreporter) -> None:
    """The fuzz tests' tally: inputs sent and 5xx answers per endpoint (testutils.fuzzing)."""
    fuzzing = sys.modules.get("testutils.fuzzing")
    if fuzzing is None or not fuzzing.TALLY:
        return
    tally = fuzzing.TALLY
    terminalreporter.section("fuzz: inputs and 5xx per endpoint")
    for endpoint in sorted(tally):
        terminalreporter.write_line(f"{tally[endpoint]['inputs']:6d}  {tally[endpoint]['5xx']:3d}  {endpoint}")
    inputs, failures = sum(t["inputs"] for t in tally.values()), sum(t["5xx"] for t in tally.values())
    terminalreporter.write_line(f"{inputs:6d}  {failures:3d}  total over {len(tally)} endpoints")
