# SPDX-License-Identifier: Apache-2.0
"""Shared fixtures: a fresh config, a migrated SQLite database per test.

Like every conftest.py, this module is never imported: its fixtures are
used by name (doc/testing.md). The helper modules listed in
``pytest_plugins`` define fixtures beside the helpers they go with (the
PostgreSQL cluster, the real Keystone, keystonemiddleware's personas).
"""

import pytest

pytest_plugins = ['tests.keystone', 'tests.postgres',
                  'tests.functional.api.tenancy']
#: The example driver package has tests of its own, run on the driver test
#: kit alone by tests/unit/testing/test_kit.py (not under this conftest).
collect_ignore = ['thirdparty_driver']

#: Modules run after the parallel part of ``make test TEST_WORKERS=N``, one
#: test at a time (doc/testing.md, "Parallel and serial"): each asserts a
#: deadline that a real peer must meet while other tests load the two
#: cores, an agent's boot or a heartbeat timeout, or an outage it starts
#: and ends itself.
SERIAL_MODULES = frozenset({
    'tests/functional/agent/test_agent_deploy.py',
    'tests/functional/agent/test_agent_lease.py',
    'tests/functional/agent/test_agent_redfish.py',
    'tests/functional/agent/test_sandbox.py',
    'tests/functional/db/test_outage.py',
    'tests/functional/placement/test_outage.py',
})


def pytest_collection_modifyitems(config, items):
    for item in items:
        if item.nodeid.split('::', 1)[0] in SERIAL_MODULES:
            item.add_marker(pytest.mark.serial)


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


@pytest.fixture
def conductor(ferrum_conductor):
    """A started conductor service (no periodic worker) on the test DB."""
    return ferrum_conductor
