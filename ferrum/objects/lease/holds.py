# SPDX-License-Identifier: Apache-2.0
"""A lease's hold on its nodes: the lease engine's writes to nodes at the
start, and which lease holds a node (for deletion and for Placement).

Each function is one transaction of conditional UPDATEs, so it is safe
to run again after a crash and never overwrites a node someone else took
meanwhile. The rows are :class:`ferrum.objects.lease.nodes.LeaseNodeRow`
as :meth:`ferrum.objects.lease.Lease.node_rows` returns them; the end's
writes are :mod:`ferrum.objects.lease.ends`'s.
"""

import datetime
from collections.abc import Callable, Sequence
from typing import Any, NamedTuple

import sqlalchemy as sa
from oslo_db import exception as db_exc

from ferrum.common import lease_statuses as statuses
from ferrum.db import api as db_api
from ferrum.objects import base
from ferrum.objects import event as event_obj
from ferrum.objects import lease as lease_obj
from ferrum.objects import node as node_obj
from ferrum.objects import node_history
from ferrum.objects.lease import nodes as lease_nodes

NODES = lease_nodes.NODES
_NODE = node_obj.TABLE


def _unused() -> sa.ColumnElement[bool]:
    """Nobody has the node: no lessee, lock, instance or allocation; not in
    maintenance; available."""
    return sa.and_(_NODE.c.lessee.is_(None), _NODE.c.reservation.is_(None),
                   _NODE.c.maintenance.is_(False),
                   _NODE.c.instance_uuid.is_(None),
                   _NODE.c.allocation_id.is_(None),
                   _NODE.c.provision_state == 'available')


def _free_for(project: Any) -> sa.ColumnElement[bool]:
    """What a start of ``project``'s lease may take: an unused node that
    no other project's lease still has (its end took the lessee away,
    :func:`ferrum.objects.lease.ends.revoke`, but the node is not back).
    The project's own ending lease does not keep it from the project's
    next lease, which takes it over (the end then hands it over), as it
    did before the end cleared the lessee; only if unused, so never a
    node the project holds back."""
    return sa.and_(_unused(), ~sa.select(NODES.c.id).where(
        NODES.c.node_id == _NODE.c.id, NODES.c.holding, NODES.c.given,
        NODES.c.project != project).exists())


_HOLD = sa.update(_NODE).where(
    _NODE.c.id == sa.bindparam('b_node'),
    sa.or_(_NODE.c.lessee == sa.bindparam('b_project'),
           _free_for(sa.bindparam('b_project')))
).values(lessee=sa.bindparam('b_project'), updated_at=sa.bindparam('b_now'))
#: The rows whose node the start gave to the project.
_GIVEN = sa.update(NODES).where(
    NODES.c.id.in_(sa.bindparam('b_rows', expanding=True))).values(
        given=sa.bindparam('b_given'))
#: Each node's extra as the lessee found it, copied as stored (JSON text),
#: once: NULL is "not copied yet", so a NULL extra is copied as "{}".
_KEEP_EXTRA = sa.update(NODES).where(
    NODES.c.lease_id == sa.bindparam('b_lease'), NODES.c.holding,
    NODES.c.node_extra.is_(None)).values(
        node_extra=sa.type_coerce(sa.func.coalesce(sa.select(
            sa.type_coerce(_NODE.c.extra, sa.Text)).where(
                _NODE.c.id == NODES.c.node_id).scalar_subquery(), '{}'),
            sa.Text))


def hold_nodes(db: db_api.Database, lease_id: int,
               rows: Sequence[lease_nodes.LeaseNodeRow], project: str,
               then: Callable[[], object] | None = None
               ) -> list[lease_nodes.LeaseNodeRow]:
    """Make ``project`` the lessee of every free node of ``rows`` (the
    lease's holding rows) or of those already its, keeping each node's
    ``extra`` to restore at the end; one transaction.

    :param then: called in that transaction when every node is held (the
        engine marks the lease active there: one commit per start).
    :returns: the rows whose node is held by someone else.
    """
    busy = []
    held = []
    held_nodes = []
    now = base.utcnow()
    with db.writer() as conn:
        conn.execute(_KEEP_EXTRA, {'b_lease': lease_id})
        for row in rows:
            if conn.execute(_HOLD, {'b_node': row.node_id,
                                    'b_project': project,
                                    'b_now': now}).rowcount:
                held.append(row.id)
                held_nodes.append(row.node_id)
            else:
                busy.append(row)
        if held:
            conn.execute(_GIVEN, {'b_rows': base.bucketed(sorted(held)),
                                  'b_given': True})
            event_obj.add(db, node_history.lease_rows(
                conn, [(node, lease_id) for node in held_nodes],
                'Lease %(lease)s started: leased to project %(project)s'))
        if not busy and then is not None:
            then()
    return busy


#: Statuses in which a lease will give its nodes to its project, or has:
#: losing a node then leaves it short of what it booked. A lease in
#: ``error`` or ``ending`` gives nothing any more; the end lets a deleted
#: node go.
BOOKING = (statuses.PENDING, statuses.STARTING, statuses.ACTIVE)
_LEASES = lease_obj.TABLE
_BOOKED_BY = sa.select(_LEASES.c.uuid, _LEASES.c.status,
                       _LEASES.c.start_at, _LEASES.c.end_at).select_from(
    NODES.join(_LEASES, _LEASES.c.id == NODES.c.lease_id)).where(
        NODES.c.node_id == sa.bindparam('b_node'), NODES.c.holding,
        _LEASES.c.status.in_(BOOKING)).order_by(_LEASES.c.start_at)


def booked_by(conn: sa.Connection, node_id: int) -> list[dict[str, Any]]:
    """The leases (uuid, status, start_at, end_at) that booked
    ``node_id`` and have not given it up (:data:`BOOKING`).

    The node's row is locked first (``FOR UPDATE``; SQLite's writer is
    alone anyway), for the caller deleting the node in ``conn``'s
    transaction: a lease being created with the node either committed
    before, and this read (a new snapshot) finds it, or its insert waits
    on the lock and then finds the node gone (:meth:`Lease.create` picks
    again).
    """
    conn.execute(sa.select(_NODE.c.id).where(
        _NODE.c.id == node_id).with_for_update())
    return [dict(row) for row in conn.execute(
        _BOOKED_BY, {'b_node': node_id}).mappings()]


_OTHER = NODES.alias('other_row')
_OTHER_LEASE = lease_obj.TABLE.alias('other_lease')
#: Another lease of the project that has the node now: one still
#: ``active`` or ``ending`` there, whose end has not given it back yet.
_HELD_BY_OTHER = sa.select(_OTHER.c.node_id).where(
    _OTHER.c.holding, _OTHER.c.lease_id != sa.bindparam('b_lease'),
    _OTHER.c.project == sa.bindparam('b_project'),
    _OTHER_LEASE.c.id == _OTHER.c.lease_id,
    _OTHER_LEASE.c.status.in_((statuses.ACTIVE, statuses.ENDING)))


def unhold_node(db: db_api.Database, row: lease_nodes.LeaseNodeRow,
                project: str) -> None:
    """Undo :func:`hold_nodes` after a failed start (nothing used it
    yet), unless another lease of the project has the node."""
    with db.writer() as conn:
        if conn.execute(sa.update(_NODE).where(
                _NODE.c.id == row.node_id, _NODE.c.lessee == project,
                _NODE.c.allocation_id.is_(None),
                _NODE.c.instance_uuid.is_(None),
                ~_HELD_BY_OTHER.where(
                    _OTHER.c.node_id == _NODE.c.id).exists()
        ).values(lessee=None, updated_at=base.utcnow()),
                {'b_lease': row.lease_id, 'b_project': project}
        ).rowcount:
            conn.execute(_GIVEN, {'b_rows': [row.id], 'b_given': False})


def held_by_others(db: db_api.Database, lease_id: int, project: str,
                   node_ids: Sequence[int]) -> set[int]:
    """Those of ``node_ids`` another lease of ``project`` has now: they
    come to this lease when that lease's end hands them over."""
    if not node_ids:
        return set()
    with db.reader() as conn:
        return set(conn.execute(_HELD_BY_OTHER.where(
            _OTHER.c.node_id.in_(sa.bindparam('b_ids', expanding=True))), {
                'b_lease': lease_id, 'b_project': project,
                'b_ids': base.bucketed(sorted(node_ids))}).scalars())


def substitute(db: db_api.Database,
               row: lease_nodes.LeaseNodeRow | lease_nodes.Vacancy,
               node_id: int,
               project: str, start: datetime.datetime) -> bool:
    """Replace the busy node of ``row`` by ``node_id``, if that one is free.

    One transaction: the new row (from ``start``), the new node's lessee,
    and the old row gone. On PostgreSQL the exclusion constraint re-checks
    the new row. A :func:`vacancy` has no row: the new row fills it.
    """
    try:
        with db.writer() as conn:
            extra = conn.execute(sa.select(_NODE.c.extra).where(
                _NODE.c.id == node_id)).scalar()
            conn.execute(sa.insert(NODES).values(
                lease_id=row.lease_id, node_id=node_id, project=project,
                start_at=start, end_at=row.end_at,
                block_end=row.block_end, holding=True, given=True,
                node_extra=extra or {}))
            if not conn.execute(sa.update(_NODE).where(
                    _NODE.c.id == node_id, _free_for(project)).values(
                        lessee=project, updated_at=base.utcnow())).rowcount:
                raise _Lost()
            if isinstance(row, lease_nodes.LeaseNodeRow):
                conn.execute(sa.delete(NODES).where(NODES.c.id == row.id))
    except _Lost:
        return False
    except db_exc.DBError as exc:
        if not lease_nodes.is_overlap_error(exc):
            raise
        return False
    return True


class _Lost(Exception):
    """The substitute was taken meanwhile: roll back."""


def vacancy(lease: lease_obj.Lease) -> lease_nodes.Vacancy:
    """A node of ``lease`` gone with its row: what :func:`substitute`
    fills."""
    return lease_nodes.Vacancy(lease.id, lease.end_at, lease.block_end)


#: How many nodes a lease holds: holding rows whose node is its project's.
_HELD = sa.select(sa.func.count()).select_from(
    NODES.join(_NODE, _NODE.c.id == NODES.c.node_id)).where(
        NODES.c.holding, _NODE.c.lessee == NODES.c.project)
#: The lease holds as many nodes as it booked: the one condition on which
#: a lease goes ``active`` (checked in the UPDATE that moves it), whatever
#: went before.
HOLDS_ALL = _HELD.where(
    NODES.c.lease_id == _LEASES.c.id).scalar_subquery() >= _LEASES.c.count


def held_count(db: db_api.Database, lease_id: int) -> int:
    """How many nodes the lease holds, as :data:`HOLDS_ALL` counts."""
    with db.reader() as conn:
        return int(conn.execute(_HELD.where(
            NODES.c.lease_id == lease_id)).scalar_one())


#: Statuses in which a lease's class sits on its nodes' providers.
PLACED = (statuses.STARTING, statuses.ACTIVE, statuses.ENDING)
#: Statuses in which allocations under a lease take its nodes from the
#: lease's Placement consumer (and give them back to it).
RUNNING = (statuses.STARTING, statuses.ACTIVE)
#: A row whose node the end took away still holds it in Placement until
#: it is back.
_HOLDERS = sa.select(NODES.c.node_id, _LEASES.c.uuid,
                     _LEASES.c.status, NODES.c.project).select_from(
    NODES.join(_LEASES, _LEASES.c.id == NODES.c.lease_id)
    .join(_NODE, _NODE.c.id == NODES.c.node_id)).where(
        NODES.c.holding,
        sa.or_(_NODE.c.lessee == NODES.c.project,
               sa.and_(NODES.c.given, _NODE.c.lessee.is_(None))),
        _LEASES.c.placement_class, _LEASES.c.status.in_(PLACED))


class PlacementHolder(NamedTuple):
    """The lease in Placement holding a node."""

    lease_uuid: str
    status: str
    project: str

    @property
    def running(self) -> bool:
        """Allocations take the node from the lease's consumer."""
        return self.status in RUNNING


def placement_holders(conn: sa.Connection, node_ids: Sequence[int] | None
                      ) -> dict[int, PlacementHolder]:
    """The lease in Placement holding each node (of every node with
    None), by node id.

    A node two leases of one project hold (the next one took it over
    while the first is ending) belongs to the one not ending.
    """
    query = _HOLDERS
    params: dict[str, Any] = {}
    if node_ids is not None:
        if not node_ids:
            return {}
        query = query.where(NODES.c.node_id.in_(
            sa.bindparam('b_ids', expanding=True)))
        params['b_ids'] = base.bucketed(sorted(node_ids))
    found: dict[int, PlacementHolder] = {}
    for node_id, uuid, status, project in conn.execute(query, params):
        if (node_id not in found
                or found[node_id].status == statuses.ENDING):
            found[node_id] = PlacementHolder(uuid, status, project)
    return found


def placement_holder_of(db: db_api.Database, node_uuid: str
                        ) -> PlacementHolder | None:
    """The lease in Placement holding ``node_uuid``, or None."""
    with db.reader() as conn:
        node_id = conn.execute(sa.select(_NODE.c.id).where(
            _NODE.c.uuid == node_uuid)).scalar()
        if node_id is None:
            return None
        return placement_holders(conn, [node_id]).get(node_id)
