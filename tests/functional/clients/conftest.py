# SPDX-License-Identifier: Apache-2.0
"""The real OpenStack clients against a real ``ferrum`` process.

One ``ferrum`` per database backend (SQLite, and PostgreSQL when it is
installed) serves the whole session; tests share it, so each test works on
nodes it created itself and filters lists by a resource class of its own
(:func:`unique`).
"""

import uuid
from collections.abc import Callable, Iterator
from typing import Any

import openstack
import pytest

from tests.conftest import wait_for
from tests.functional import server

#: How long a node may take for one state change on a loaded CI machine.
WAIT_TIMEOUT = 60.0


def unique(prefix: str) -> str:
    """A name no other test uses (resource classes, node names)."""
    return '%s-%s' % (prefix, uuid.uuid4().hex[:10])


def unique_mac() -> str:
    """A MAC address no other port in the session has (ports are unique)."""
    return '52:54:00:%s' % ':'.join(
        '%02x' % b for b in uuid.uuid4().bytes[:3])


def wait_until(predicate: Callable[[], Any], what: str,
               timeout: float = WAIT_TIMEOUT) -> Any:
    """Poll ``predicate`` until it returns something truthy, or fail."""
    return wait_for(predicate, timeout, interval=0.02, what=what)


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


def connect(url: str, **options: Any) -> openstack.connection.Connection:
    """openstacksdk as a standalone user configures it: no Keystone."""
    return openstack.connect(
        load_yaml_config=False, load_envvars=False, auth_type='none',
        baremetal_endpoint_override=url, **options)


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
