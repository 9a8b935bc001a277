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
