# SPDX-License-Identifier: Apache-2.0
"""Pooled PostgreSQL connections: pinged only after idling, and recovered.

oslo.db pings every checkout; ferrum pings only connections idle for
``PING_AFTER_IDLE_S`` (see ``ferrum.db.api``). These tests kill the
server side of pooled connections with ``pg_terminate_backend``, as a
database restart or an idle-connection reaper would.
"""

from typing import Any

import pytest
import sqlalchemy as sa
import sqlalchemy.dialects.postgresql.psycopg2  # noqa: F401
from oslo_config import cfg

from ferrum.common import exception
from ferrum.db import api as db_api
from tests.postgres import PostgresServer


def _terminate_backends(server: PostgresServer, url: str) -> int:
    dbname = sa.engine.make_url(url).database
    admin = server.admin_connection()
    try:
        with admin.cursor() as cursor:
            cursor.execute(
                'SELECT count(pg_terminate_backend(pid)) FROM '
                'pg_stat_activity WHERE datname = %s '
                'AND pid <> pg_backend_pid()', (dbname,))
            killed: int = cursor.fetchone()[0]
    finally:
        admin.close()
    return killed


def _select_one(database: db_api.Database) -> Any:
    with database.reader() as conn:
        return conn.execute(sa.text('SELECT 1')).scalar()


@pytest.fixture
def count_pings(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Counts the pings of every engine created after it."""
    calls = [0]
    dialect = sa.dialects.postgresql.psycopg2.dialect
    original = dialect.do_ping

    def counting(self: Any, dbapi_connection: Any) -> bool:
        calls[0] += 1
        return bool(original(self, dbapi_connection))

    monkeypatch.setattr(dialect, 'do_ping', counting)
    return calls


def test_warm_connection_not_pinged(conf: cfg.ConfigOpts, pg_url: str,
                                    count_pings: list[int]) -> None:
    database = db_api.Database(conf, url=pg_url)
    try:
        for _ in range(20):
            assert _select_one(database) == 1
    finally:
        database.dispose()
    assert count_pings[0] == 0


def test_idle_connection_pinged_and_replaced(
        conf: cfg.ConfigOpts, pg_url: str, postgresql_server: PostgresServer,
        count_pings: list[int], monkeypatch: pytest.MonkeyPatch) -> None:
    # Every checkout counts as idle: the pooled connection killed below is
    # found dead by the ping and replaced before the transaction starts.
    monkeypatch.setattr(db_api, 'PING_AFTER_IDLE_S', 0.0)
    database = db_api.Database(conf, url=pg_url)
    try:
        assert _select_one(database) == 1
        assert _terminate_backends(postgresql_server, pg_url) >= 1
        assert _select_one(database) == 1
    finally:
        database.dispose()
    assert count_pings[0] >= 1


def test_dead_warm_connection_fails_once(
        conf: cfg.ConfigOpts, pg_url: str,
        postgresql_server: PostgresServer) -> None:
    # Not pinged: the first transaction on the dead connection fails as a
    # connection error (503 in the API), which invalidates the pool, so the
    # next one connects afresh.
    database = db_api.Database(conf, url=pg_url)
    try:
        assert _select_one(database) == 1
        assert _terminate_backends(postgresql_server, pg_url) >= 1
        with pytest.raises(exception.DatabaseUnavailable):
            _select_one(database)
        assert _select_one(database) == 1
    finally:
        database.dispose()


def test_api_answers_503_then_recovers(
        conf: cfg.ConfigOpts, pg_url: str,
        postgresql_server: PostgresServer) -> None:
    from ferrum.api import app as api_app
    from ferrum.conductor import service
    from ferrum.db import migration

    # No heartbeat during the test: it could meet the dead connection first.
    conf.set_override('heartbeat_interval', 3600, group='conductor')
    database = db_api.Database(conf, url=pg_url)
    migration.upgrade(database.engine)
    conductor = service.ConductorService(conf, db=database)
    conductor.start(start_periodics=False)
    try:
        client = api_app.create_app(
            conf, database,
            conductor.manager).test_client()
        headers = {'X-OpenStack-Ironic-API-Version': '1.65'}
        assert client.get('/v1/nodes', headers=headers).status_code == 200
        assert _terminate_backends(postgresql_server, pg_url) >= 1
        failed = client.get('/v1/nodes', headers=headers)
        assert failed.status_code == 503, failed.get_data(as_text=True)
        assert 'database could not be reached' in failed.get_data(
            as_text=True)
        assert 'Traceback' not in failed.get_data(as_text=True)
        assert client.get('/v1/nodes', headers=headers).status_code == 200
    finally:
        conductor.stop()
        database.dispose()
