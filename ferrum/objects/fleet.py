# SPDX-License-Identifier: Apache-2.0
"""The fleet in numbers, for the API's ``/metrics``: three grouped reads.

Each read is one ``GROUP BY`` over tables the other objects own, so a
scrape costs the same three statements at 10 nodes or 100,000:

1. nodes by provision state, power state, maintenance, resource class,
   conductor group, owner and lessee: one pass over ``nodes``, whose rows
   are summed here into the two views the gauges show (by state, and by
   owner and lessee). One scan instead of two halves the cost on SQLite at
   100,000 nodes (doc/performance/metrics.md, issue 31); the rows are
   at most the distinct combinations, a few thousand in a large fleet;
2. allocations by state, leases by status, live conductors by group, the
   Placement records by state and the conductors' Placement states, as
   one ``UNION ALL`` of ``(kind, key, count)``;
3. the Placement outbox: its rows, and the age of the oldest.

Nothing else of a node is read: no ``driver_info``, no name, no UUID.
"""

from __future__ import annotations

import dataclasses
import datetime

import sqlalchemy as sa

from ferrum.db import api as db_api
from ferrum.db import models
from ferrum.objects import conductor as conductor_obj

_NODES = models.table(models.Node)
_ALLOCATIONS = models.table(models.Allocation)
_LEASES = models.table(models.Lease)
_CONDUCTORS = conductor_obj.TABLE
_OUTBOX = models.table(models.PlacementOutbox)
_PROVIDERS = models.table(models.PlacementProvider)
_STATUS = models.table(models.PlacementStatus)

#: The kinds of read 3.
ALLOCATIONS = 'allocation'
LEASES = 'lease'
CONDUCTORS = 'conductor'
PROVIDERS = 'placement_provider'
PLACEMENT_VIEWS = 'placement_status'

#: (provision_state, power_state, maintenance, resource_class,
#: conductor_group) -> nodes.
NodeStates = dict[tuple[str, str, bool, str, str], int]


@dataclasses.dataclass(frozen=True)
class Fleet:
    nodes: NodeStates
    #: (owner, lessee) -> nodes, '' for unset; only nodes with either.
    projects: dict[tuple[str, str], int]
    #: kind (above) -> key -> count.
    counts: dict[str, dict[str, int]]
    outbox_rows: int
    outbox_oldest: datetime.datetime | None


def _grouped(kind: str, column: sa.ColumnElement[str],
             table: sa.Table) -> sa.Select[str, str, int]:
    return sa.select(sa.literal(kind).label('kind'),
                     sa.func.coalesce(column, '').label('key'),
                     sa.func.count().label('n')).select_from(table).group_by(
                         column)


def read(db: db_api.Database, heartbeat_timeout: int) -> Fleet:
    """The counts (see the module docstring) in one read transaction.

    :param heartbeat_timeout: seconds after which a silent conductor is
        not live (``[conductor] heartbeat_timeout``).
    """
    n = _NODES.c
    # Power state first: led by an indexed column (provision_state),
    # SQLite walks that index and reads each row out of order, where a
    # plain scan is faster (no index covers the seven columns).
    grouped = (n.power_state, n.maintenance, n.provision_state,
               n.resource_class, n.conductor_group, n.owner, n.lessee)
    others = sa.union_all(
        _grouped(ALLOCATIONS, _ALLOCATIONS.c.state, _ALLOCATIONS),
        _grouped(LEASES, _LEASES.c.status, _LEASES),
        _grouped(CONDUCTORS, _CONDUCTORS.c.conductor_group,
                 _CONDUCTORS).where(conductor_obj.alive(heartbeat_timeout)),
        _grouped(PROVIDERS, _PROVIDERS.c.state, _PROVIDERS),
        _grouped(PLACEMENT_VIEWS, _STATUS.c.state, _STATUS))
    nodes: NodeStates = {}
    projects: dict[tuple[str, str], int] = {}
    with db.reader() as conn:
        for row in conn.execute(sa.select(*grouped, sa.func.count())
                                .group_by(*grouped)):
            power, maintenance, provision, rc, group, owner, lessee, count = (
                row)
            key = (provision or '', power or '', bool(maintenance), rc or '',
                   group or '')
            nodes[key] = nodes.get(key, 0) + int(count)
            if owner or lessee:
                pair = (owner or '', lessee or '')
                projects[pair] = projects.get(pair, 0) + int(count)
        counts: dict[str, dict[str, int]] = {}
        for row in conn.execute(others):
            counts.setdefault(row[0], {})[row[1]] = int(row[2])
        outbox = conn.execute(sa.select(
            sa.func.count(), sa.func.min(_OUTBOX.c.created_at))).one()
    return Fleet(nodes, projects, counts, int(outbox[0]), outbox[1])
