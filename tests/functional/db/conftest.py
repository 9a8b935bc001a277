# SPDX-License-Identifier: Apache-2.0
"""An empty, never migrated database on SQLite and on PostgreSQL, for the
migration tests."""

from collections.abc import Iterator
from typing import Any

import pytest
from oslo_config import cfg

from ferrum.db import api as db_api


@pytest.fixture(params=['sqlite', 'postgresql'])
def empty_db(request: pytest.FixtureRequest, conf: cfg.ConfigOpts,
             tmp_path: Any) -> Iterator[db_api.Database]:
    """A ferrum Database on an empty (never migrated) database.

    SQLite is a file under the test's tmp_path, so it goes through the same
    WAL/pooled engine set-up as production; PostgreSQL is a fresh database
    on the session's throwaway server (skipped when that is unavailable).
    """
    if request.param == 'sqlite':
        url = 'sqlite:///%s' % (tmp_path / 'migrations.sqlite')
    else:
        url = request.getfixturevalue('pg_url')
    database = db_api.Database(conf, url=url)
    try:
        yield database
    finally:
        database.dispose()
