# SPDX-License-Identifier: Apache-2.0
"""Shared fixtures: a fresh config, a migrated SQLite database per test."""

import os

import pytest


pytest_plugins = ['tests.keystone', 'tests.postgres']
#: The example driver package has tests of its own, run on the driver test
#: kit alone by tests/unit/testing/test_kit.py (not under this conftest).
collect_ignore = ['thirdparty_driver']


def require_real(what: str) -> None:
    """Skip, or fail under FERRUM_REQUIRE_REAL=1, when ``what`` is missing."""
    if os.environ.get('FERRUM_REQUIRE_REAL') == '1':
        pytest.fail('%s is required (FERRUM_REQUIRE_REAL=1) but missing'
                    % what)
    pytest.skip('%s is not available' % what)


# conf, db and conductor are the driver test kit's fixtures (ferrum.testing),
# under the short names ferrum's own tests use.

@pytest.fixture
def conf(ferrum_conf):
    """A fresh ConfigOpts with every ferrum option, state under tmp_path."""
    return ferrum_conf


@pytest.fixture
def db(ferrum_db):
    """A migrated SQLite database in the test's own directory."""
    return ferrum_db


def wait_for(predicate, timeout: float = 10.0, interval: float = 0.005,
             what: str = 'condition'):
    """Poll ``predicate`` until it returns something truthy, or fail."""
    import time
    deadline = time.monotonic() + timeout
    while True:
        result = predicate()
        if result:
            return result
        if time.monotonic() > deadline:
            pytest.fail('timed out after %.1fs waiting for %s' % (timeout,
                                                                  what))
        time.sleep(interval)


@pytest.fixture
def conductor(ferrum_conductor):
    """A started conductor service (no periodic worker) on the test DB."""
    return ferrum_conductor
