# SPDX-License-Identifier: Apache-2.0
"""The fleet in numbers, for the API's ``/metrics``: four grouped reads.

Each read is one ``GROUP BY`` over a table the other objects own, so a
scrape costs the same four statements at 10 nodes or 100,000:

1. nodes by provision state, power state, maintenance, resource class and
   conductor group (a few hundred rows at most: the product of small
   sets);
2. nodes by owner and lessee, where either is set (one row per pair of
   projects);
3. allocations by state, leases by status, live conductors by group, the
   Placement records by state and the conductors' Placement states, as
   one ``UNION ALL`` of ``(kind, key, count)``;
4. the Placement outbox: its rows, and the age of the oldest.

Nothing else of a node is read: no ``driver_info``, no name, no UUID.
"""

from __future__ import annotations

import dataclasses
import datetime

import sqlalchemy as sa

from ferrum.db import api as db_api
from ferrum.db import models
from ferrum.objects import conductor as conductor_obj

_NODES: sa.Table = models.Node.__table__  # type: ignore[assignment]
_ALLOCATIONS: sa.Table = models.Allocation.__table__  # type: ignore[assignment]
_LEASES: sa.Table = models.Lease.__table__  # type: ignore[assignment]
_CONDUCTORS = conductor_obj.TABLE
_OUTBOX: sa.Table = models.PlacementOutbox.__table__  # type: ignore[assignment]
_PROVIDERS: sa.Table = models.PlacementProvider.__table__  # type: ignore[assignment]
_STATUS: sa.Table = models.PlacementStatus.__table__  # type: ignore[assignment]

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
    by_state = (n.provision_state, n.power_state, n.maintenance,
                n.resource_class, n.conductor_group)
    others = sa.union_all(
        _grouped(ALLOCATIONS, _ALLOCATIONS.c.state, _ALLOCATIONS),
        _grouped(LEASES, _LEASES.c.status, _LEASES),
        _grouped(CONDUCTORS, _CONDUCTORS.c.conductor_group,
                 _CONDUCTORS).where(conductor_obj.alive(heartbeat_timeout)),
        _grouped(PROVIDERS, _PROVIDERS.c.state, _PROVIDERS),
        _grouped(PLACEMENT_VIEWS, _STATUS.c.state, _STATUS))
    with db.reader() as conn:
        nodes: NodeStates = {
            (row[0] or '', row[1] or '', bool(row[2]), row[3] or '',
             row[4] or ''): int(row[5])
            for row in conn.execute(sa.select(*by_state, sa.func.count())
                                    .group_by(*by_state))}
        projects = {
            (row[0] or '', row[1] or ''): int(row[2])
            for row in conn.execute(
                sa.select(n.owner, n.lessee, sa.func.count())
                .where(sa.or_(n.owner.is_not(None), n.lessee.is_not(None)))
                .group_by(n.owner, n.lessee))}
        counts: dict[str, dict[str, int]] = {}
        for row in conn.execute(others):
            counts.setdefault(row[0], {})[row[1]] = int(row[2])
        outbox = conn.execute(sa.select(
            sa.func.count(), sa.func.min(_OUTBOX.c.created_at))).one()
    return Fleet(nodes, projects, counts, int(outbox[0]), outbox[1])
