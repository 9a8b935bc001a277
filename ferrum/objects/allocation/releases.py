# SPDX-License-Identifier: Apache-2.0
"""Deleting an allocation, and freeing the node it holds.

An allocation goes in one transaction with its node's side of the link:
the node loses ``allocation_id`` and ``instance_uuid``, and the allocation
row is deleted. A deletion by the allocation's owner
(:func:`destroy_releasing_node`) gives the node back: the tenant's
``instance_info`` and VIFs go too (:mod:`ferrum.objects.vif`), so that the
node's next tenant sees none of them. A deletion on the way of another
change (a tear-down, which clears both itself; an ``instance_uuid``
PATCHed away; a failed backfill) keeps ``instance_info`` but the traits
the allocation put there (:func:`released_node_values`).
Creating and claiming are :mod:`ferrum.objects.allocation`'s.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping
from typing import Any

import sqlalchemy as sa

from ferrum.common import exception
from ferrum.common import states
from ferrum.db import api as db_api
from ferrum.objects import allocation as allocation_obj
from ferrum.objects import base
from ferrum.objects import event as event_obj
from ferrum.objects import node as node_obj
from ferrum.objects import placement_queue
from ferrum.objects import vif as vif_obj

TABLE = allocation_obj.TABLE
_NODES = node_obj.TABLE
_ONE = TABLE.c.id == sa.bindparam('b_id')
_DELETE = sa.delete(TABLE).where(_ONE)
#: What the event of a deletion names: the allocation, its owner (who may
#: read the event) and the state it ended in.
_DELETED = (TABLE.c.uuid, TABLE.c.owner, TABLE.c.state)
_DELETE_RETURNING = _DELETE.returning(*_DELETED)
#: The node columns a release writes.
_FREED = ('allocation_id', 'instance_uuid', 'instance_info')
_LOCK = {column: sa.select(TABLE.c.id, TABLE.c.node_id, *_DELETED).where(
    TABLE.c[column] == sa.bindparam('b_ident')).with_for_update()
    for column in base.IDENT_COLUMNS}
#: The allocation and its node, both rows locked for the transaction.
_LOCK_WITH_NODE = {column: sa.select(
    TABLE.c.id, TABLE.c.node_id, *_DELETED,
    _NODES.c.uuid.label('node_uuid'), _NODES.c.reservation,
    _NODES.c.allocation_id, _NODES.c.provision_state,
    _NODES.c.maintenance).select_from(
        TABLE.join(_NODES, _NODES.c.id == TABLE.c.node_id)).where(
            TABLE.c[column] == sa.bindparam('b_ident')).with_for_update()
    for column in base.IDENT_COLUMNS}
_RELEASE_NODE = sa.update(_NODES).where(
    _NODES.c.id == sa.bindparam('b_node')).values(
        allocation_id=None, instance_uuid=None, instance_info={})


def _release_in_one_statement(column: str) -> sa.Executable:
    """PostgreSQL: free the node and delete the allocation in one statement.

    The fast path of ``destroy_releasing_node``: it matches only when the
    node points back at the allocation, no task holds the node's lock and
    the node may lose its allocation (``states.UPDATE_ALLOWED_STATES`` or
    maintenance, as ``release.check_releasable`` says). The node row's
    lock, taken by the UPDATE, serialises it with claims and with other
    deletes. Anything else falls back to the general path, which explains
    its refusals.
    """
    released = sa.update(_NODES).where(
        TABLE.c[column] == sa.bindparam('b_ident'),
        _NODES.c.id == TABLE.c.node_id,
        _NODES.c.allocation_id == TABLE.c.id,
        _NODES.c.reservation.is_(None),
        sa.or_(_NODES.c.maintenance, _NODES.c.provision_state.in_(
            sorted(states.UPDATE_ALLOWED_STATES)))).values(
        allocation_id=None, instance_uuid=None, instance_info={},
        updated_at=sa.bindparam('b_now')).returning(
        TABLE.c.id, *_DELETED, _NODES.c.uuid.label('node_uuid'),
        _NODES.c.id.label('node_id')).cte('released')
    return sa.delete(TABLE).where(TABLE.c.id == released.c.id).returning(
        released.c.uuid, released.c.owner, released.c.state,
        released.c.node_uuid, released.c.node_id)


_RELEASE_IN_ONE = {column: _release_in_one_statement(column)
                   for column in base.IDENT_COLUMNS}


def delete(db: db_api.Database, allocation_id: int,
           node_uuid: str | None = None) -> bool:
    """Delete an allocation by id; False when it was already gone.

    The caller has made its node (``node_uuid``, named in the event of the
    deletion) let go of it.
    """
    with db.writer() as conn:
        placement_queue.allocations_deleting(db, _ONE, {'b_id': allocation_id})
        deleted = conn.execute(_DELETE_RETURNING, {'b_id': allocation_id}
                               ).mappings().first()
        if deleted is not None:
            _record(db, deleted, node_uuid)
    return deleted is not None


def destroy_releasing_node(
        db: db_api.Database, ident: int | str,
        check: Callable[[Mapping[str, Any]], None]) -> Released:
    """Delete allocation ``ident`` and free its node, in one transaction.

    The allocation and node rows are locked by one ``SELECT ... FOR
    UPDATE`` (on SQLite the write transaction already excludes other
    writers), then
    ``check(node)`` may refuse by raising, then the node loses
    ``allocation_id``, ``instance_uuid``, its ``instance_info`` and its
    VIFs (the tenant gives it back), and the allocation is deleted.

    :returns: what was released; when ``locked_by`` is set, a task held
        the node's lock and nothing was written (the caller may retry).
    :raises AllocationNotFound: no such allocation.
    """
    column, value = base.ident_column(ident)
    with db.writer() as conn:
        if conn.dialect.name == 'postgresql':
            # Two round trips instead of four: a third of the time of
            # DELETE /v1/allocations on PostgreSQL went to them.
            done = conn.execute(_RELEASE_IN_ONE[column], {
                'b_ident': value, 'b_now': base.utcnow()}).first()
            if done is not None:
                vif_obj.forget(db, [done.node_id])
                placement_queue.uuids_changed(db, [done.node_uuid], _FREED)
                placement_queue.allocations_deleted(
                    db, [(done.uuid, done.node_uuid)])
                _record(db, done._mapping, done.node_uuid)
                return Released(done.uuid, done.node_uuid, None)
        node = conn.execute(_LOCK_WITH_NODE[column], {'b_ident': value}
                            ).mappings().first()
        if node is None:  # no such allocation, or it holds no node
            row = conn.execute(_LOCK[column], {'b_ident': value}).first()
            if row is None:
                raise exception.AllocationNotFound(allocation=ident)
            conn.execute(_DELETE, {'b_id': row.id})
            placement_queue.allocations_deleted(db, [(row.uuid, None)])
            _record(db, row._mapping, None)
            return Released(row.uuid, None, None)
        if node['allocation_id'] == node['id']:
            if node['reservation'] is not None:
                return Released(node['uuid'], node['node_uuid'],
                                node['reservation'])
            check(dict(node, uuid=node['node_uuid']))
            conn.execute(_RELEASE_NODE, {'b_node': node['node_id'],
                                         'updated_at': base.utcnow()})
            vif_obj.forget(db, [node['node_id']])
            placement_queue.nodes_changed(db, [node['node_id']], _FREED)
        conn.execute(_DELETE, {'b_id': node['id']})
        placement_queue.allocations_deleted(
            db, [(node['uuid'], node['node_uuid'])])
        _record(db, node, node['node_uuid'])
    return Released(node['uuid'], node['node_uuid'], None)


def _record(db: db_api.Database, allocation: Mapping[Any, Any],
            node_uuid: str | None) -> None:
    # The allocation's end in the event feed, in the deleting transaction.
    event_obj.add(db, [event_obj.allocation_entry(
        dict(allocation), 'deleted', node_uuid=node_uuid)])


@dataclasses.dataclass(frozen=True)
class Released:
    """The outcome of :func:`destroy_releasing_node`."""

    allocation_uuid: str
    node_uuid: str | None
    #: The host holding the node's lock; nothing was deleted then.
    locked_by: str | None


def released_node_values(instance_info: Mapping[str, Any]
                         ) -> dict[str, Any]:
    """What a node's columns become when its allocation goes away.

    The traits the allocation put into instance_info go too, so they do
    not steer the node's next deployment.
    """
    info = {key: value for key, value in instance_info.items()
            if key != 'traits'}
    return {'instance_info': info, 'updated_at': base.utcnow()}
