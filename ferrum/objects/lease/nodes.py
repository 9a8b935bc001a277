# SPDX-License-Identifier: Apache-2.0
"""A lease's bookings: its ``lease_nodes`` rows, which node it holds over
which window, and the typed row the lease engine works on.

Each row books one node over ``[start_at, block_end)``, ``block_end``
being the lease's end plus the cleaning margin; no node is booked twice
over overlapping windows (see :mod:`ferrum.objects.lease`, which creates
the rows). :class:`LeaseNodeRow` is a row read with its node's state, as
the engine decides on it (:func:`node_rows_of`).
"""

from __future__ import annotations

import dataclasses
import datetime
from collections.abc import Collection, Sequence
from typing import Any

import sqlalchemy as sa
from oslo_db import exception as db_exc

from ferrum.db import api as db_api
from ferrum.db import models
from ferrum.objects import base
from ferrum.objects import node as node_obj

NODES = models.table(models.LeaseNode)
_LEASES = models.table(models.Lease)
_NODE = node_obj.TABLE
#: What the engine decides on about each node of a lease, read apart from
#: the lease's rows: as a join, PostgreSQL hashed every node (15 ms at
#: 10,000 nodes) until autovacuum had analyzed the tables.
_NODE_STATE = sa.select(
    _NODE.c.id, _NODE.c.uuid.label('node_uuid'), _NODE.c.lessee,
    _NODE.c.reservation, _NODE.c.allocation_id, _NODE.c.instance_uuid,
    _NODE.c.maintenance, _NODE.c.provision_state,
    _NODE.c.resource_class, _NODE.c.automated_clean).where(
        _NODE.c.id.in_(sa.bindparam('b_ids', expanding=True)))


@dataclasses.dataclass(frozen=True)
class LeaseNodeRow:
    """One ``lease_nodes`` row and the state of its node."""

    id: int
    lease_id: int
    node_id: int
    project: str
    start_at: datetime.datetime
    end_at: datetime.datetime
    block_end: datetime.datetime
    holding: bool
    #: The start made the node's lessee the lease's project.
    given: bool
    #: The node's extra when the lease started, restored at its end.
    node_extra: Any
    #: The end started the node's automated cleaning (its undeploy, or a
    #: ``manage`` and ``provide``): the node goes back once available.
    wiped: bool
    # The node's state, read apart (see _NODE_STATE).
    node_uuid: str
    lessee: str | None
    reservation: str | None
    allocation_id: int | None
    instance_uuid: str | None
    maintenance: bool
    provision_state: str
    resource_class: str | None
    #: The node's own choice, None for ``[conductor] automated_clean``.
    automated_clean: bool | None


@dataclasses.dataclass(frozen=True)
class Vacancy:
    """A node the lease booked that is gone with its row (deleted past the
    deletion's check: a tool writing to the database): a place a
    substitute fills (:func:`ferrum.objects.lease.holds.substitute`)."""

    lease_id: int
    end_at: datetime.datetime
    block_end: datetime.datetime


def block_end(end_at: datetime.datetime, margin_s: int) -> datetime.datetime:
    return end_at + datetime.timedelta(seconds=margin_s)


def overlapping(conn: sa.Connection, node_ids: Collection[int] | None,
                start: datetime.datetime, end: datetime.datetime,
                exclude_lease: int | None = None) -> set[int]:
    """Nodes (of ``node_ids``, or any) held by a lease over [start, end)."""
    query = sa.select(NODES.c.node_id).where(
        NODES.c.holding, NODES.c.start_at < end, NODES.c.block_end > start)
    if node_ids is not None:
        query = query.where(NODES.c.node_id.in_(
            base.bucketed(sorted(node_ids))))
    if exclude_lease is not None:
        query = query.where(NODES.c.lease_id != exclude_lease)
    return set(conn.execute(query).scalars())


def held_clause(start: Any, end: Any) -> sa.ColumnElement[bool]:
    """Nodes a lease holds over [start, end): for node filters."""
    return sa.select(NODES.c.id).where(
        NODES.c.node_id == _NODE.c.id, NODES.c.holding,
        NODES.c.start_at < end, NODES.c.block_end > start
    ).offset(0).exists()


def is_overlap_error(exc: Exception) -> bool:
    """Whether ``exc`` is PostgreSQL's exclusion constraint refusing.

    Two transactions inserting rows for the same nodes may also wait on
    each other's rows while checking the constraint: PostgreSQL then
    aborts one as a deadlock, which is the same race, lost.
    """
    if isinstance(exc, db_exc.DBDeadlock):
        return True
    original = getattr(exc, 'inner_exception', None) or exc
    original = getattr(original, 'orig', None) or original
    return (getattr(original, 'pgcode', None) == '23P01'
            or 'lease_nodes_no_overlap' in str(original))


#: A scalar subquery, not a join: one primary-key probe per row. As a join,
#: PostgreSQL hashed all nodes (15 ms at 10,000) while the tables were not
#: yet analyzed.
_NODE_UUIDS = sa.select(NODES.c.lease_id, sa.select(_NODE.c.uuid).where(
    _NODE.c.id == NODES.c.node_id).scalar_subquery()).where(
        NODES.c.lease_id.in_(sa.bindparam('b_ids', expanding=True))
    ).order_by(NODES.c.id)


def node_uuids(conn: sa.Connection, lease_ids: Sequence[int]
                ) -> dict[int, list[str]]:
    result: dict[int, list[str]] = {lease_id: [] for lease_id in lease_ids}
    if not lease_ids:
        return result
    rows = conn.execute(_NODE_UUIDS, {
        'b_ids': base.bucketed(sorted(lease_ids))})
    for lease_id, uuid in rows:
        result[lease_id].append(uuid)
    return result


def let_go(conn: sa.Connection, lease_ids: Collection[int]) -> None:
    """Leases in a final status stop holding their nodes' windows."""
    conn.execute(sa.update(NODES).where(NODES.c.lease_id.in_(
        base.bucketed(sorted(lease_ids)))).values(holding=False))


def node_rows_of(db: db_api.Database, lease_ids: Collection[int],
                 holding_only: bool = True
                 ) -> dict[int, list[LeaseNodeRow]]:
    """The ``lease_nodes`` rows of each lease with their nodes' state
    (:class:`LeaseNodeRow`): two queries, however many leases."""
    result: dict[int, list[LeaseNodeRow]] = {
        lease_id: [] for lease_id in lease_ids}
    if not lease_ids:
        return result
    query = sa.select(NODES).where(NODES.c.lease_id.in_(
        base.bucketed(sorted(lease_ids))))
    if holding_only:
        query = query.where(NODES.c.holding)
    with db.reader() as conn:
        rows = conn.execute(query.order_by(NODES.c.id)).all()
        if not rows:
            return result
        nodes = {node.id: node for node in conn.execute(
            _NODE_STATE, {'b_ids': base.bucketed(sorted(
                {row.node_id for row in rows}))})}
    for row in rows:
        state = dict(nodes[row.node_id]._mapping)
        del state['id']
        result[row.lease_id].append(LeaseNodeRow(**row._mapping, **state))
    return result


def calendar(db: db_api.Database, node_id: int, start: datetime.datetime,
             end: datetime.datetime) -> list[sa.RowMapping]:
    """The windows leases hold ``node_id`` in over [start, end)."""
    with db.reader() as conn:
        return list(conn.execute(sa.select(
            _LEASES.c.uuid, _LEASES.c.name, _LEASES.c.project,
            _LEASES.c.status,
            NODES.c.start_at, NODES.c.end_at, NODES.c.block_end).select_from(
                NODES.join(_LEASES, _LEASES.c.id == NODES.c.lease_id)).where(
                NODES.c.node_id == node_id, NODES.c.holding,
                NODES.c.start_at < end, NODES.c.block_end > start)
            .order_by(NODES.c.start_at)).mappings())
