# SPDX-License-Identifier: Apache-2.0
"""A lease's end on its nodes: the project's rights taken away, the nodes
given back (or handed over to the project's next lease), the rows let go.

Each function is one transaction of conditional UPDATEs, safe to run
again after a crash (the end runs them at each pass until every node is
back). The start's writes are :mod:`ferrum.objects.lease.holds`'s.
"""

import datetime
from collections.abc import Sequence

import sqlalchemy as sa

from ferrum.common import lease_statuses as statuses
from ferrum.db import api as db_api
from ferrum.objects import base
from ferrum.objects import event as event_obj
from ferrum.objects import lease as lease_obj
from ferrum.objects import node as node_obj
from ferrum.objects import node_history
from ferrum.objects import vif as vif_obj
from ferrum.objects.lease import nodes as lease_nodes

NODES = lease_nodes.NODES
_NODE = node_obj.TABLE


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
#: A row of the ending leases that the node's lessee is revoked for.
_REVOKED_ROW = (
    NODES.c.node_id == _NODE.c.id,
    NODES.c.lease_id.in_(sa.bindparam('b_leases', expanding=True)),
    NODES.c.holding, NODES.c.given, NODES.c.project == _NODE.c.lessee,
    ~_PASSED_ON)
#: The end takes the project's rights away: the node's lessee, where it is
#: still the project of a row the start gave it to and no next lease of
#: the project has the node. One statement, so a next lease's start that
#: commits meanwhile is seen, not undone.
_REVOKE = sa.update(_NODE).where(
    _NODE.c.lessee.is_not(None),
    sa.select(NODES.c.id).where(*_REVOKED_ROW).exists()).values(
        lessee=None, updated_at=sa.bindparam('b_updated', type_=sa.DateTime)
).returning(_NODE.c.id)
#: The rows :data:`_REVOKE` will revoke for, read just before it in its
#: transaction: the lease each node's history entry names (of a batch that
#: mixes projects, the one whose project is the lessee).
_REVOKING = sa.select(NODES.c.node_id, NODES.c.lease_id).where(
    _NODE.c.lessee.is_not(None), *_REVOKED_ROW)
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
        lessee=None, instance_info={}, instance_name=None,
        extra=sa.func.coalesce(sa.type_coerce(NODES.c.node_extra, sa.Text),
                               '{}'),
        updated_at=sa.bindparam('b_updated', type_=sa.DateTime)
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
        revoke_in(conn, lease_ids, now, db)


def revoke_in(conn: sa.Connection, lease_ids: Sequence[int],
              now: datetime.datetime, db: db_api.Database) -> None:
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
        # The engine's now decides the windows; updated_at is when the
        # row really changed (a test clock may run ahead of it).
        values = {'b_leases': base.bucketed(sorted(lease_ids)),
                  'b_now': now, 'b_updated': base.utcnow()}
        rows = conn.execute(_REVOKING, values).all()
        revoked = set(conn.execute(_REVOKE, values).scalars())
        # The nodes' history (``db``: the transaction's database), each
        # entry naming the lease revoked for. A node whose row changed
        # between the two statements (another transaction's commit, read
        # by the second) is named with any lease of the batch that held
        # it: of one project's two, the earlier.
        pairs = [(node, lease) for node, lease in rows if node in revoked]
        named = {node for node, _lease in pairs}
        pairs += [(node, lease) for node in sorted(revoked - named)
                  for lease in lease_ids]
        event_obj.add(db, node_history.lease_rows(
            conn, pairs, 'Lease %(lease)s ended: project %(project)s is no '
            'longer the lessee'))


def give_back_all(db: db_api.Database,
                  rows: Sequence[lease_nodes.LeaseNodeRow],
                  now: datetime.datetime,
                  unwiped: Sequence[lease_nodes.LeaseNodeRow] = ()
                  ) -> set[int]:
    """Give back the nodes of ``rows`` (of one lease or several) that are
    available and unused: clear the lessee and what the lessee left
    (``instance_info``, VIFs; ``extra`` back to its value at the start), and
    stop holding them. A node the project's next lease already holds
    stays its, and the row just lets go. A node :func:`revoke` took
    away has no lessee by then. Of two rows of one node, the earlier
    lease's goes back first (its copy of ``extra`` is from before the
    project had the node) and the other is no longer ``given``. One
    transaction; ``now`` is the engine's, as for :func:`revoke_in`.

    :param unwiped: rows whose node must be cleaned before it goes back
        (:mod:`ferrum.leases.wipe`): they only pass on, to a next lease
        of the project that holds the node (it keeps the node as it is,
        no cleaning in between).
    :returns: the ids of the rows whose node is back or passed on.
    """
    by_node: dict[int, lease_nodes.LeaseNodeRow] = {}
    for row in sorted([*rows, *unwiped], key=lambda row: row.start_at):
        # Two rows of one node (two leases of a project ending together):
        # the second waits for the next run, when the node is free again.
        by_node.setdefault(row.node_id, row)
    if not by_node:
        return set()
    ready = {row.id for row in rows}
    values = {'b_rows': base.bucketed(sorted(
        row.id for row in by_node.values())), 'b_now': now,
        'b_updated': base.utcnow()}
    giving = sorted(row.id for row in by_node.values() if row.id in ready)
    with db.writer() as conn:
        for next_id, extra in conn.execute(_TAKING_OVER, values).all():
            conn.execute(sa.update(NODES).where(NODES.c.id == next_id)
                         .values(node_extra=extra))
        passed = set(conn.execute(_HAND_OVER, values).scalars())
        nodes: list[int] = []
        if giving:
            nodes = list(conn.execute(_GIVE_BACK, dict(
                values, b_rows=base.bucketed(giving))).scalars())
        back = {by_node[node_id].id for node_id in nodes}
        # The lessee's VIFs, as its instance_info, stay with it.
        vif_obj.forget(db, nodes)
        event_obj.add(db, node_history.lease_rows(
            conn, [(node_id, by_node[node_id].lease_id) for node_id in nodes],
            'Given back by lease %(lease)s of project %(project)s'))
        if back:
            conn.execute(_LET_GO, {'b_rows': base.bucketed(sorted(back))})
            conn.execute(sa.update(NODES).where(
                NODES.c.node_id.in_(base.bucketed(sorted(nodes))),
                NODES.c.holding, NODES.c.given).values(given=False))
    return back | passed


def mark_wiped(db: db_api.Database, row_ids: Sequence[int]) -> None:
    """The end started the cleaning of the nodes of ``row_ids``: they go
    back once available again, where a cleaning ends (one that fails
    leaves the node in maintenance)."""
    if not row_ids:
        return
    with db.writer() as conn:
        conn.execute(sa.update(NODES).where(NODES.c.id.in_(
            base.bucketed(sorted(row_ids)))).values(wiped=True))


_LEASES = lease_obj.TABLE
#: The ending lease that took the node away (:func:`revoke_in`) and holds
#: it until it is back: whatever cleans the node meanwhile cleans it for
#: that lease's end (its undeploy's tear-down, its wipe, an operator's
#: ``provide`` after a failed cleaning).
_WIPING_FOR = sa.select(_LEASES.c.uuid, NODES.c.project).select_from(
    NODES.join(_LEASES, _LEASES.c.id == NODES.c.lease_id)
    .join(_NODE, _NODE.c.id == NODES.c.node_id)).where(
        NODES.c.node_id == sa.bindparam('b_node'), NODES.c.holding,
        NODES.c.given, _NODE.c.lessee.is_(None),
        _LEASES.c.status == statuses.ENDING).order_by(
            NODES.c.start_at, NODES.c.id).limit(1)


def cleaning_for(db: db_api.Database, node_id: int
                 ) -> tuple[str, str] | None:
    """(uuid, project) of the ending lease a cleaning of ``node_id`` is
    for, or None: the step entries of the cleaning name that lease, and
    its project may read them (the feed shows which erase steps ran on a
    node a lease had)."""
    with db.reader() as conn:
        found = conn.execute(_WIPING_FOR, {'b_node': node_id}).first()
    return None if found is None else (found.uuid, found.project)


def drop_rows(db: db_api.Database, row_ids: Sequence[int]) -> None:
    """Stop holding nodes the lease never had (its start failed)."""
    if not row_ids:
        return
    with db.writer() as conn:
        conn.execute(_LET_GO, {'b_rows': base.bucketed(sorted(row_ids))})
