# SPDX-License-Identifier: Apache-2.0
"""A started conductor and an API client on SQLite and on PostgreSQL."""

import dataclasses
import datetime
import json
from collections.abc import Iterator
from typing import Any

import pytest
from oslo_config import cfg

from ferrum.api import app as api_app
from ferrum.conductor import service
from ferrum.db import api as db_api
from ferrum.db import migration
from ferrum.objects import base
from ferrum.objects import node as node_obj
from ferrum.objects import trait as trait_obj

FAKE = {'driver': 'fake-hardware', 'provision_state': 'available',
        'power_state': 'power off', 'resource_class': 'gold',
        **{'%s_interface' % kind: 'fake' for kind in (
            'power', 'management', 'boot', 'deploy', 'inspect', 'vendor')}}


@dataclasses.dataclass
class Site:
    """One backend: the conductor, its database and an API client."""

    backend: str
    conductor: service.ConductorService
    db: db_api.Database
    client: Any

    def nodes(self, count: int, traits: tuple[str, ...] = (),
              **values: Any) -> list[node_obj.Node]:
        made = []
        for _ in range(count):
            node = node_obj.Node.create(self.db, dict(FAKE, **values))
            if traits:
                trait_obj.set_for_node(self.db, node.id, list(traits))
            made.append(node)
        return made

    def post(self, **lease: Any) -> Any:
        return self.client.post('/v1/leases', json=lease)


def fault(resp: Any) -> str:
    """The message of an Ironic-shaped error body."""
    return json.loads(resp.json['error_message'])['faultstring']


def iso(when: datetime.datetime) -> str:
    return when.replace(microsecond=0).isoformat() + 'Z'


def later(seconds: float) -> str:
    return iso(base.utcnow() + datetime.timedelta(seconds=seconds))


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
    conductor = service.ConductorService(conf, db=database)
    conductor.start(start_periodics=False)
    app = api_app.create_app(conf, database,
                             conductor.manager)
    try:
        yield Site(request.param, conductor, database, app.test_client())
    finally:
        conductor.stop()
        database.dispose()
