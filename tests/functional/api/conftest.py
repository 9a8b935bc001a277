# SPDX-License-Identifier: Apache-2.0
"""An API application on a started conductor, driven through Flask's client.

The Keystone personas through the real keystonemiddleware (``tokens``,
``keystone_conf``, ``ks_client``) are fixtures of tenancy.py, a plugin of
the root conftest.
"""

import pytest

from ferrum.api import app as api_app


@pytest.fixture
def app(conf, db, conductor):
    return api_app.create_app(conf, db,
                              conductor.manager)


@pytest.fixture
def client(app):
    return app.test_client()
