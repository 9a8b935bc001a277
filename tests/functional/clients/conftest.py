# SPDX-License-Identifier: Apache-2.0
"""The real OpenStack clients against a real ``ferrum`` process.

One ``ferrum`` per database backend (SQLite, and PostgreSQL when it is
installed) serves the whole session; tests share it, so each test works on
nodes it created itself and filters lists by a resource class of its own
(``session.unique``). The helpers are in session.py.
"""

import os
import uuid
from collections.abc import Iterator
from typing import Any

import openstack
import pytest

from tests.functional import server
from tests.functional.clients.session import BAREMETAL
from tests.functional.clients.session import Baremetal
from tests.functional.clients.session import connect
from tests.real import require_real


@pytest.fixture(scope='session')
def ferrum_sqlite_url(tmp_path_factory: pytest.TempPathFactory
                      ) -> Iterator[str]:
    """The base URL of a ferrum on SQLite, for the whole session."""
    with server.running_ferrum(tmp_path_factory.mktemp('ferrum-sqlite')
                               ) as url:
        yield url


@pytest.fixture(scope='session')
def ferrum_postgresql_url(tmp_path_factory: pytest.TempPathFactory,
                          postgresql_server: Any) -> Iterator[str]:
    """The base URL of a ferrum on PostgreSQL, for the whole session."""
    dbname = 'ferrum_clients_%s' % uuid.uuid4().hex[:12]
    postgresql_server.create_database(dbname)
    try:
        with server.running_ferrum(
                tmp_path_factory.mktemp('ferrum-postgresql'),
                database_url=postgresql_server.url(dbname)) as url:
            yield url
    finally:
        postgresql_server.drop_database(dbname)


@pytest.fixture(scope='session', params=['sqlite', 'postgresql'])
def ferrum_url(request: pytest.FixtureRequest) -> str:
    """The base URL of a ferrum on each database backend in turn."""
    url: str = request.getfixturevalue('ferrum_%s_url' % request.param)
    return url


@pytest.fixture
def conn(ferrum_url: str) -> Iterator[openstack.connection.Connection]:
    connection = connect(ferrum_url)
    yield connection
    connection.close()


@pytest.fixture
def strict(ferrum_url: str) -> Iterator[openstack.connection.Connection]:
    """A connection that does not retry a 409 (the SDK's default does,
    for "node locked", for about 15 s): for the answers that must be 409.
    """
    connection = connect(ferrum_url, baremetal_status_code_retries=0)
    yield connection
    connection.close()


@pytest.fixture(scope='module')
def baremetal(ferrum_sqlite_url: str,
              tmp_path_factory: pytest.TempPathFactory) -> Baremetal:
    """The ``baremetal`` CLI on the SQLite ferrum, with a home of its own."""
    if not os.access(BAREMETAL, os.X_OK):
        require_real('the baremetal CLI (python-ironicclient)')
    return Baremetal(ferrum_sqlite_url,
                     str(tmp_path_factory.mktemp('cli-home')))
