# SPDX-License-Identifier: Apache-2.0
"""What the lease tests share: a Site (one database backend with its
conductor and API client on one injected clock, made by conftest.py's
``site`` fixture), the nodes they book, and the times and error messages
they write and read."""

import dataclasses
import datetime
import json
from typing import Any

from ferrum.common import states
from ferrum.conductor import service
from ferrum.db import api as db_api
from ferrum.leases import engine
from ferrum.objects import node as node_obj
from ferrum.objects import trait as trait_obj
from ferrum.testing.flows import settled
from tests.clocks import Clock

FAKE = {'driver': 'fake-hardware', 'provision_state': 'available',
        'power_state': 'power off', 'resource_class': 'gold',
        **{'%s_interface' % kind: 'fake' for kind in (
            'power', 'management', 'boot', 'deploy', 'inspect', 'vendor')}}


@dataclasses.dataclass
class Site:
    """One backend: the conductor, its database and an API client, both
    on ``clock`` (the engine's now and the API's)."""

    backend: str
    conductor: service.ConductorService
    db: db_api.Database
    client: Any
    clock: Clock

    def later(self, seconds: float) -> str:
        """``seconds`` after the site's now, as the API takes it."""
        return self.clock.later(seconds)

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


def run_and_clean(site: Site, nodes: Any) -> None:
    """A run of the engine, the cleaning its ends start on ``nodes`` (an
    end cleans every node before it goes back; fake hardware: at once, on
    a worker), then the run that gives them back."""
    engine.run(site.conductor.ctx)
    for node in nodes:
        settled(site.db, node.id, states.AVAILABLE)
    engine.run(site.conductor.ctx)


def fault(resp: Any) -> str:
    """The message of an Ironic-shaped error body."""
    return json.loads(resp.json['error_message'])['faultstring']


def iso(when: datetime.datetime) -> str:
    return when.replace(microsecond=0).isoformat() + 'Z'

