# SPDX-License-Identifier: Apache-2.0
"""What Placement must be told, queued in the transaction of the change.

Two queues, both read and emptied by :mod:`ferrum.placement`:

- ``placement_outbox``: a node whose provider needs a push. Every write
  of a node column the provider depends on, and every change of a node's
  traits, calls :func:`nodes_changed` (or :func:`uuids_changed`) in its
  own transaction;
- ``placement_releases``: the Placement consumer of an allocation that
  was deleted. Every deletion of allocations calls
  :func:`allocations_deleting` (before the DELETE, which it names with
  the same condition) or :func:`allocations_deleted` in its own
  transaction.

Explicit calls, not an engine-wide statement hook: every write of
``nodes``, ``node_traits`` and ``allocations`` is built and run in
:mod:`ferrum.objects` (a house rule in ``tests/unit/test_house_rules.py``
keeps them out of every other package), so the calls sit beside the
writes (sixteen calls in ``node``, ``trait``, ``allocation`` and
``allocation.releases``). A write of other node columns (the lock, the
lessee, ``extra``) queues nothing, as the hooks did: the lease engine
queues the pushes its lessee changes need itself
(:meth:`ferrum.placement.leases.Steps.push`). What is queued follows the
configuration, read at each write (:attr:`ferrum.db.api.Database.
queues_pushes`, :attr:`~ferrum.db.api.Database.queues_releases`): without
``[placement]`` nothing is queued, since nothing would read it.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping
from typing import Any

import sqlalchemy as sa

from ferrum.db import api as db_api
from ferrum.db import models
from ferrum.objects import base

OUTBOX = models.table(models.PlacementOutbox)
RELEASES = models.table(models.PlacementRelease)
_NODES = models.table(models.Node)
_ALLOCATIONS = models.table(models.Allocation)

_NOW = 'b_queued_at'
_BY_ID = sa.insert(OUTBOX).from_select(
    ['node_uuid', 'created_at'], sa.select(
        _NODES.c.uuid, sa.bindparam(_NOW, type_=sa.DateTime)).where(
            _NODES.c.id.in_(sa.bindparam('b_ids', expanding=True))))
_ALLOCATIONS_AND_NODES = sa.select(
    _ALLOCATIONS.c.uuid, _NODES.c.uuid,
    sa.bindparam(_NOW, type_=sa.DateTime)).select_from(
        _ALLOCATIONS.outerjoin(_NODES, _NODES.c.id == _ALLOCATIONS.c.node_id))
_RELEASE_COLUMNS = ['consumer_uuid', 'node_uuid', 'created_at']
#: Node columns the provider depends on: a change to any of them is queued
#: (:mod:`ferrum.placement.mapping` builds the provider from them).
COLUMNS = frozenset({'uuid', 'provision_state', 'maintenance', 'power_state',
                     'instance_uuid', 'allocation_id', 'retired',
                     'resource_class'})


def pushes(db: db_api.Database, columns: Collection[str] | None) -> bool:
    """Whether a write of ``columns`` (None: the whole row, as an insert
    or a delete) is queued for a push."""
    if not db.queues_pushes:
        return False
    return columns is None or not COLUMNS.isdisjoint(columns)


def nodes_changed(db: db_api.Database, node_ids: Collection[int],
                  columns: Collection[str] | None = None) -> None:
    """Queue a push of these nodes (joins the caller's transaction), if
    ``columns`` (see :func:`pushes`) matter to their providers."""
    if node_ids and pushes(db, columns):
        with db.writer() as conn:
            conn.execute(_BY_ID, {'b_ids': base.bucketed(sorted(node_ids)),
                                  _NOW: base.utcnow()})


def uuids_changed(db: db_api.Database, node_uuids: Iterable[str],
                  columns: Collection[str] | None = None) -> None:
    """:func:`nodes_changed` by node uuid (a node just created, or gone)."""
    if pushes(db, columns):
        push(db, node_uuids)


def push(db: db_api.Database, node_uuids: Iterable[str]) -> int:
    """Queue a push of these nodes whatever changed (the reconcile's way
    to repair drift; joins the caller's transaction); how many."""
    now = base.utcnow()
    rows = [{'node_uuid': uuid, 'created_at': now} for uuid in node_uuids]
    if rows:
        with db.writer() as conn:
            conn.execute(sa.insert(OUTBOX), rows)
    return len(rows)


def allocations_deleting(db: db_api.Database, where: sa.ColumnElement[bool],
                         params: Mapping[str, Any] | None = None) -> None:
    """Queue the release of the consumers of the allocations ``where``
    names (over ``allocations`` and their ``nodes``), in the caller's
    transaction, just before it deletes them."""
    if db.queues_releases:
        with db.writer() as conn:
            conn.execute(sa.insert(RELEASES).from_select(
                _RELEASE_COLUMNS, _ALLOCATIONS_AND_NODES.where(where)),
                dict(params or {}, **{_NOW: base.utcnow()}))


def allocations_deleted(db: db_api.Database,
                        consumers: Iterable[tuple[str, str | None]]) -> None:
    """Queue the release of these consumers: (allocation uuid, the uuid of
    the node it held or None), in the caller's transaction."""
    if db.queues_releases:
        release(db, consumers)


def release(db: db_api.Database,
            consumers: Iterable[tuple[str, str | None]]) -> None:
    """Queue these consumers' release whether deletions queue theirs or
    not: a claim that may have reached Placement while its answer was
    lost (joins the caller's transaction)."""
    now = base.utcnow()
    rows = [{'consumer_uuid': consumer, 'node_uuid': node, 'created_at': now}
            for consumer, node in consumers]
    if rows:
        with db.writer() as conn:
            conn.execute(sa.insert(RELEASES), rows)
