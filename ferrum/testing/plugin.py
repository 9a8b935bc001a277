# SPDX-License-Identifier: Apache-2.0
"""The pytest plugin of the driver test kit (see :mod:`ferrum.testing`)."""

import os
import shutil
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from oslo_config import cfg

from ferrum import conf as conf_mod
from ferrum.conductor import service
from ferrum.db import api as db_api
from ferrum.db import migration
from ferrum.objects import node as node_obj


@pytest.fixture
def ferrum_conf(tmp_path: Path) -> Iterator[cfg.ConfigOpts]:
    """A fresh configuration with every ferrum option; state in tmp_path."""
    conf = conf_mod.new_conf()
    conf.set_override('state_path', str(tmp_path))
    conf.set_override('host', 'test-conductor')
    yield conf
    conf.reset()


@pytest.fixture(scope='session')
def ferrum_schema(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """An SQLite file at the newest schema, migrated once per session:
    each test's database starts as a copy (the migrations take 80-130 ms,
    a copy under 1 ms, and most tests have a database)."""
    conf = conf_mod.new_conf()
    conf.set_override('state_path', str(tmp_path_factory.mktemp('schema')))
    database = db_api.Database(conf)
    migration.upgrade(database.engine)
    # Everything into the main file, which alone is copied (WAL mode).
    with database.engine.connect() as conn:
        conn.exec_driver_sql('PRAGMA wal_checkpoint(TRUNCATE)')
    database.dispose()
    path = _sqlite_path(db_api.connection_url(conf))
    assert path is not None  # no [database] connection: the default file
    return Path(path)


@pytest.fixture
def ferrum_db(ferrum_conf: cfg.ConfigOpts, ferrum_schema: Path
              ) -> Iterator[db_api.Database]:
    """A migrated SQLite database in the test's own directory."""
    path = _sqlite_path(db_api.connection_url(ferrum_conf))
    copied = path is not None and not os.path.exists(path)
    if copied:
        shutil.copyfile(ferrum_schema, str(path))
    database = db_api.Database(ferrum_conf)
    if not copied:
        # Another database, or a file already there: migrated as it is.
        migration.upgrade(database.engine)
    yield database
    database.dispose()


def _sqlite_path(url: str) -> str | None:
    """The file of an SQLite ``url``; None for any other database."""
    prefix = 'sqlite:///'
    return url[len(prefix):] if url.startswith(prefix) else None


@pytest.fixture
def ferrum_conductor(ferrum_conf: cfg.ConfigOpts,
                     ferrum_db: db_api.Database
                     ) -> Iterator[service.ConductorService]:
    """A started conductor with the configured drivers, no periodics.

    Starting it loads and checks the enabled drivers as ``ferrum-conductor``
    does, so a driver that does not load fails here, naming its entry point.
    """
    conductor = service.ConductorService(ferrum_conf, db=ferrum_db)
    conductor.start(start_periodics=False)
    yield conductor
    conductor.stop()


@pytest.fixture
def ferrum_enroll(ferrum_conductor: service.ConductorService
                  ) -> Callable[..., node_obj.Node]:
    """``enroll(driver, **fields)``: a new node, in ``enroll``."""
    def enroll(driver: str, **fields: Any) -> node_obj.Node:
        manager = ferrum_conductor.manager
        if manager is None:
            raise RuntimeError('The conductor has stopped.')
        return manager.create_node(dict(fields, driver=driver))
    return enroll
