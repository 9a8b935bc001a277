# SPDX-License-Identifier: Apache-2.0
"""A lease's hold on its nodes: the lease engine's writes to nodes.

Each function is one transaction of conditional UPDATEs, so it is safe
to run again after a crash and never overwrites a node someone else took
meanwhile. The rows are ``lease_nodes`` rows as
:meth:`ferrum.objects.lease.Lease.node_rows` returns them.
"""

import datetime
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import sqlalchemy as sa
from oslo_db import exception as db_exc

from ferrum.common import lease_statuses as statuses
from ferrum.db import api as db_api
from ferrum.objects import base
from ferrum.objects import lease as lease_obj
from ferrum.objects import node as node_obj

NODES = lease_obj.NODES
_NODE = node_obj.TABLE
is_overlap_error = lease_obj.is_overlap_error


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
    :func:`revoke`, but the node is not back). The project's own ending
    lease does not keep it from the project's next lease, which takes it
    over (the end then hands it over, :data:`_PASSED_ON`), as it did
    before the end cleared the lessee; only if unused, so never a node
    the project holds back."""
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
               rows: Sequence[Mapping[str, Any]], project: str,
               then: Callable[[], object] | None = None
               ) -> list[Mapping[str, Any]]:
    """Make ``project`` the lessee of every free node of ``rows`` (the
    lease's holding rows) or of those already its, keeping each node's
    ``extra`` to restore at the end; one transaction.

    :param then: called in that transaction when every node is held (the
        engine marks the lease active there: one commit per start).
    :returns: the rows whose node is held by someone else.
    """
    busy = []
    held = []
    now = base.utcnow()
    with db.writer() as conn:
        conn.execute(_KEEP_EXTRA, {'b_lease': lease_id})
        for row in rows:
            if conn.execute(_HOLD, {'b_node': row['node_id'],
                                    'b_project': project,
                                    'b_now': now}).rowcount:
                held.append(row['id'])
            else:
                busy.append(row)
        if held:
            conn.execute(_GIVEN, {'b_rows': base.bucketed(sorted(held)),
                                  'b_given': True})
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


def unhold_node(db: db_api.Database, row: Mapping[str, Any],
                project: str) -> None:
    """Undo :func:`hold_nodes` after a failed start (nothing used it
    yet), unless another lease of the project has the node."""
    with db.writer() as conn:
        if conn.execute(sa.update(_NODE).where(
                _NODE.c.id == row['node_id'], _NODE.c.lessee == project,
                _NODE.c.allocation_id.is_(None),
                _NODE.c.instance_uuid.is_(None),
                ~_HELD_BY_OTHER.where(
                    _OTHER.c.node_id == _NODE.c.id).exists()
        ).values(lessee=None, updated_at=base.utcnow()),
                {'b_lease': row['lease_id'], 'b_project': project}
        ).rowcount:
            conn.execute(_GIVEN, {'b_rows': [row['id']], 'b_given': False})


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


def substitute(db: db_api.Database, row: Mapping[str, Any], node_id: int,
               project: str, start: datetime.datetime) -> bool:
    """Replace the busy node of ``row`` by ``node_id``, if that one is free.

    One transaction: the new row (from ``start``), the new node's lessee,
    and the old row gone. On PostgreSQL the exclusion constraint re-checks
    the new row. A ``row`` without ``id`` is a :func:`vacancy`: the new
    row fills it.
    """
    try:
        with db.writer() as conn:
            extra = conn.execute(sa.select(_NODE.c.extra).where(
                _NODE.c.id == node_id)).scalar()
            conn.execute(sa.insert(NODES).values(
                lease_id=row['lease_id'], node_id=node_id, project=project,
                start_at=start, end_at=row['end_at'],
                block_end=row['block_end'], holding=True, given=True,
                node_extra=extra or {}))
            if not conn.execute(sa.update(_NODE).where(
                    _NODE.c.id == node_id, _free_for(project)).values(
                        lessee=project, updated_at=base.utcnow())).rowcount:
                raise _Lost()
            if row['id'] is not None:
                conn.execute(sa.delete(NODES).where(NODES.c.id == row['id']))
    except _Lost:
        return False
    except db_exc.DBError as exc:
        if not is_overlap_error(exc):
            raise
        return False
    return True


class _Lost(Exception):
    """The substitute was taken meanwhile: roll back."""


def vacancy(lease: lease_obj.Lease) -> dict[str, Any]:
    """A row of ``lease`` whose node is gone with it (deleted past the
    deletion's check: a tool writing to the database): what
    :func:`substitute` fills."""
    return {'id': None, 'lease_id': lease.id, 'node_id': None,
            'node_uuid': None, 'end_at': lease.end_at,
            'block_end': lease.block_end}


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


_NEXT = NODES.alias('next_row')
_NEXT_LEASE = lease_obj.TABLE.alias('next_lease')
#: The node already belongs to the next lease of the same project: one
#: that holds it from a start already reached and run (the start took the
#: node as the project's own, as a re-run start does; a lease still
#: ``pending`` may yet be cancelled, and would then leave the node with
#: the project for good) and has not ended. The end must not clear the
#: lessee under that lease.
_NEXT_ROW = (
    _NEXT.c.node_id == NODES.c.node_id, _NEXT.c.holding,
    _NEXT.c.lease_id != NODES.c.lease_id,
    _NEXT.c.project == NODES.c.project,
    _NEXT.c.start_at <= sa.bindparam('b_now', type_=sa.DateTime),
    _NEXT.c.end_at > sa.bindparam('b_now', type_=sa.DateTime),
    _NEXT_LEASE.c.id == _NEXT.c.lease_id,
    _NEXT_LEASE.c.status.in_((statuses.STARTING, statuses.ACTIVE)))
_PASSED_ON = sa.select(_NEXT.c.id).where(*_NEXT_ROW).exists()
#: The end takes the project's rights away: the node's lessee, where it is
#: still the project of a row the start gave it to and no next lease of
#: the project has the node. One statement, so a next lease's start that
#: commits meanwhile is seen, not undone.
_REVOKE = sa.update(_NODE).where(
    _NODE.c.lessee.is_not(None),
    sa.select(NODES.c.id).where(
        NODES.c.node_id == _NODE.c.id,
        NODES.c.lease_id.in_(sa.bindparam('b_leases', expanding=True)),
        NODES.c.holding, NODES.c.given, NODES.c.project == _NODE.c.lessee,
        ~_PASSED_ON).exists()).values(
            lessee=None, updated_at=sa.bindparam('b_now', type_=sa.DateTime))
#: The next rows that take the nodes over, with the ending rows' copy of
#: each node's ``extra`` from before the project had it: the next lease's
#: start copied the node's extra as this project left it, and at its end
#: the node must get back the original, not the first lease's tenant's.
_TAKING_OVER = sa.select(_NEXT.c.id, NODES.c.node_extra).where(
    NODES.c.id.in_(sa.bindparam('b_rows', expanding=True)),
    NODES.c.node_extra.is_not(None), *_NEXT_ROW)
#: One UPDATE for the nodes of many rows: per node, PostgreSQL planned the
#: single-node form on ``nodes_provision_state_idx`` while the table was
#: not yet analyzed, reading every available node (1.5 ms each at 10,000).
#: The lessee must be the row's project; ``extra`` goes back to the copy
#: the start kept (stored JSON text, copied as is).
_GIVE_BACK = sa.update(_NODE).where(
    _NODE.c.id == NODES.c.node_id,
    NODES.c.id.in_(sa.bindparam('b_rows', expanding=True)),
    sa.or_(_NODE.c.lessee == NODES.c.project,
           sa.and_(NODES.c.given, _NODE.c.lessee.is_(None))),
    _NODE.c.reservation.is_(None), _NODE.c.instance_uuid.is_(None),
    _NODE.c.allocation_id.is_(None),
    _NODE.c.provision_state == 'available', ~_PASSED_ON).values(
        lessee=None, instance_info={},
        extra=sa.func.coalesce(sa.type_coerce(NODES.c.node_extra, sa.Text),
                               '{}'),
        updated_at=sa.bindparam('b_now', type_=sa.DateTime)
).returning(_NODE.c.id)
_LET_GO = sa.update(NODES).where(
    NODES.c.id.in_(sa.bindparam('b_rows', expanding=True))).values(
        holding=False)
_HAND_OVER = sa.update(NODES).where(
    NODES.c.id.in_(sa.bindparam('b_rows', expanding=True)),
    _PASSED_ON).values(holding=False).returning(NODES.c.id)


def revoke(db: db_api.Database, lease_ids: Sequence[int],
           now: datetime.datetime) -> None:
    """:func:`revoke_in`, in a transaction of its own."""
    with db.writer() as conn:
        revoke_in(conn, lease_ids, now)


def revoke_in(conn: sa.Connection, lease_ids: Sequence[int],
              now: datetime.datetime) -> None:
    """Take the projects' rights on the nodes of ``lease_ids`` (ending)
    away: clear each node's lessee where it is still the lease's project
    and no next lease of the project has the node. The first step of an
    end, in the transaction that claims it: a lessee that keeps the node
    from coming back (protected, maintenance, a redeploy) must not keep
    its rights meanwhile, as ESI-leap clears the lessee before it cleans.
    The rows keep holding the node, ``given``, until it is back.
    Idempotent: each run of the end repeats it (a failed start of the
    project's next lease may have set the lessee again). ``now`` is the
    engine's (its clock decides whether that next lease has begun)."""
    if lease_ids:
        conn.execute(_REVOKE, {'b_leases': base.bucketed(sorted(lease_ids)),
                               'b_now': now})


def give_back_all(db: db_api.Database, rows: Sequence[Mapping[str, Any]],
                  now: datetime.datetime) -> set[int]:
    """Give back the nodes of ``rows`` (of one lease or several) that are
    available and unused: clear the lessee and what the lessee left
    (``instance_info``; ``extra`` back to its value at the start), and
    stop holding them. A node the project's next lease already holds
    stays its, and the row just lets go. A node :func:`revoke` took
    away has no lessee by then. Of two rows of one node, the earlier
    lease's goes back first (its copy of ``extra`` is from before the
    project had the node) and the other is no longer ``given``. One
    transaction; ``now`` is the engine's, as for :func:`revoke_in`.

    :returns: the ids of the rows whose node is back or passed on.
    """
    by_node: dict[int, Mapping[str, Any]] = {}
    for row in sorted(rows, key=lambda row: row['start_at']):
        # Two rows of one node (two leases of a project ending together):
        # the second waits for the next run, when the node is free again.
        by_node.setdefault(row['node_id'], row)
    if not by_node:
        return set()
    values = {'b_rows': base.bucketed(sorted(
        row['id'] for row in by_node.values())), 'b_now': now}
    with db.writer() as conn:
        for next_id, extra in conn.execute(_TAKING_OVER, values).all():
            conn.execute(sa.update(NODES).where(NODES.c.id == next_id)
                         .values(node_extra=extra))
        passed = set(conn.execute(_HAND_OVER, values).scalars())
        nodes = conn.execute(_GIVE_BACK, values).scalars().all()
        back = {by_node[node_id]['id'] for node_id in nodes}
        if back:
            conn.execute(_LET_GO, {'b_rows': base.bucketed(sorted(back))})
            conn.execute(sa.update(NODES).where(
                NODES.c.node_id.in_(base.bucketed(sorted(nodes))),
                NODES.c.holding, NODES.c.given).values(given=False))
    return back | passed


def drop_rows(db: db_api.Database, row_ids: Sequence[int]) -> None:
    """Stop holding nodes the lease never had (its start failed)."""
    if not row_ids:
        return
    with db.writer() as conn:
        conn.execute(_LET_GO, {'b_rows': base.bucketed(sorted(row_ids))})


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


def placement_holders(conn: sa.Connection,
                      node_ids: Sequence[int] | None
                      ) -> dict[int, tuple[str, str]]:
    """The lease in Placement holding each node (of every node with None):
    node id -> (lease uuid, status).

    A node two leases of one project hold (the next one took it over
    while the first is ending) belongs to the one not ending.
    """
    return {node_id: (uuid, status) for node_id, (uuid, status, _project)
            in _holders(conn, node_ids).items()}


def _holders(conn: sa.Connection, node_ids: Sequence[int] | None
             ) -> dict[int, tuple[str, str, str]]:
    """:func:`placement_holders`, with each lease's project."""
    query = _HOLDERS
    params: dict[str, Any] = {}
    if node_ids is not None:
        if not node_ids:
            return {}
        query = query.where(NODES.c.node_id.in_(
            sa.bindparam('b_ids', expanding=True)))
        params['b_ids'] = base.bucketed(sorted(node_ids))
    found: dict[int, tuple[str, str, str]] = {}
    for node_id, uuid, status, project in conn.execute(query, params):
        if node_id not in found or found[node_id][1] == statuses.ENDING:
            found[node_id] = (uuid, status, project)
    return found


def placement_holder_of(db: db_api.Database, node_uuid: str
                        ) -> tuple[str, str, str] | None:
    """The lease in Placement holding ``node_uuid``: (lease uuid, status,
    project), or None."""
    with db.reader() as conn:
        node_id = conn.execute(sa.select(_NODE.c.id).where(
            _NODE.c.uuid == node_uuid)).scalar()
        if node_id is None:
            return None
        return _holders(conn, [node_id]).get(node_id)
