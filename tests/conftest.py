# SPDX-License-Identifier: Apache-2.0
"""Shared fixtures: a fresh config, a migrated SQLite database per test."""

import os

import pytest

from ferrum import conf as ferrum_conf
from ferrum.db import api as db_api
from ferrum.db import migration

pytest_plugins = ['tests.postgres']
#: The example driver package has tests of its own, run on the driver test
#: kit alone by tests/unit/testing/test_kit.py (not under this conftest).
collect_ignore = ['thirdparty_driver']


def require_real(what: str) -> None:
    """Skip, or fail under FERRUM_REQUIRE_REAL=1, when ``what`` is missing."""
    if os.environ.get('FERRUM_REQUIRE_REAL') == '1':
        pytest.fail('%s is required (FERRUM_REQUIRE_REAL=1) but missing'
                    % what)
    pytest.skip('%s is not available' % what)


@pytest.fixture
def conf(tmp_path):
    """A fresh ConfigOpts with every ferrum option, state under tmp_path."""
    c = ferrum_conf.new_conf()
    c.set_override('state_path', str(tmp_path))
    c.set_override('host', 'test-conductor')
    yield c
    c.reset()


@pytest.fixture
def db(conf):
    """A migrated SQLite database in the test's own directory."""
    database = db_api.Database(conf)
    migration.upgrade(database.engine)
    yield database
    database.dispose()


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
def conductor(conf, db):
    """A started conductor service (no periodic worker) on the test DB."""
    from ferrum.conductor import service
    svc = service.ConductorService(conf, db=db)
    svc.start(start_periodics=False)
    yield svc
    svc.stop()
