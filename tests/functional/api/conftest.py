# SPDX-License-Identifier: Apache-2.0
"""An API application on the test database, driven through Flask's client."""

import pytest

from ferrum.api import app as api_app


@pytest.fixture
def client(conf, db):
    return api_app.create_app(conf, db).test_client()
