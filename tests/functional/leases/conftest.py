# SPDX-License-Identifier: Apache-2.0
"""A started conductor and an API client on SQLite and on PostgreSQL,
on one clock that moves only when the test moves it."""

from collections.abc import Iterator
from typing import Any

import pytest
from oslo_config import cfg

from ferrum.api import app as api_app
from ferrum.conductor import service
from ferrum.db import api as db_api
from ferrum.db import migration
from tests.clocks import Clock
from tests.functional.leases.sites import Site


@pytest.fixture(params=['sqlite', 'postgresql'])
def site(request: pytest.FixtureRequest, conf: cfg.ConfigOpts,
         tmp_path: Any) -> Iterator[Site]:
    if request.param == 'sqlite':
        url = 'sqlite:///%s' % (tmp_path / 'leases.sqlite')
    else:
        url = request.getfixturevalue('pg_url')
    conf.set_override('node_locked_retry_attempts', 2, 'conductor')
    conf.set_override('node_locked_retry_interval', 0, 'conductor')
    conf.set_override('cleaning_margin', 0, 'lease')
    conf.set_override('guard_time', 0, 'lease')
    database = db_api.Database(conf, url=url)
    migration.upgrade(database.engine)
    clock = Clock()
    conductor = service.ConductorService(conf, db=database, clock=clock)
    conductor.start(start_periodics=False)
    app = api_app.create_app(conf, database, conductor.manager, clock=clock)
    try:
        yield Site(request.param, conductor, database, app.test_client(),
                   clock)
    finally:
        conductor.stop()
        database.dispose()
