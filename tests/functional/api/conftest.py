# SPDX-License-Identifier: Apache-2.0
"""An API application on a started conductor, driven through Flask's client."""

import pytest

from ferrum.api import app as api_app


@pytest.fixture
def app(conf, db, conductor):
    return api_app.create_app(conf, db,
                              conductor.manager)


@pytest.fixture
def client(app):
    return app.test_client()


# Keystone personas through the real keystonemiddleware (tenancy.py).
from tests.functional.api.tenancy import keystone_conf  # noqa: E402,F401
from tests.functional.api.tenancy import ks_client  # noqa: E402,F401
from tests.functional.api.tenancy import tokens  # noqa: E402,F401
