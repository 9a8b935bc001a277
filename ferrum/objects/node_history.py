# SPDX-License-Identifier: Apache-2.0
"""A node's history (Ironic's API 1.78): the entries, and how node writes
make them.

Every write of a node's row that goes through :class:`~ferrum.objects.node.
Node` (``save``, ``release``, ``write_if_held``) passes the node as it was
and the changed columns to :func:`rows`, which turns them into entries:

- a change of ``provision_state``: event type ``transition``, with the new
  ``state`` and ``target_provision_state`` and ``duration_seconds``, the
  time spent in the state left (from ``provision_updated_at``); an
  ``ERROR`` when the new state is a failure state or a ``last_error``
  comes with it, and the error is the event's text;
- a new ``last_error`` without a state change: type ``error``, ``ERROR``;
- ``maintenance`` on or off, with the reason: type ``maintenance``;
- the entries a conductor noted on the node for this write
  (:meth:`~ferrum.objects.node.Node.note`: the power sync's corrections,
  take-overs).

The entries go into the write's transaction (:func:`ferrum.objects.event.
add`). Lease start and end on a node are recorded by the lease engine's
writes (:func:`lease_rows`).
"""

from __future__ import annotations

import datetime
from collections.abc import Mapping, Sequence
from typing import Any

import sqlalchemy as sa

from ferrum.common import exception
from ferrum.common import states
from ferrum.db import api as db_api
from ferrum.db import models
from ferrum.objects import base
from ferrum.objects import event as event_obj

TABLE = event_obj.TABLE
_NODES = models.table(models.Node)
_LEASES = models.table(models.Lease)
_LEASE_NODES = models.table(models.LeaseNode)
TRANSITION = 'transition'
ERROR_TYPE = 'error'
MAINTENANCE = 'maintenance'
#: Ironic's type for what the periodic monitoring (the power sync) does.
MONITORING = 'monitoring'
TAKEOVER = 'takeover'
LEASE = 'lease'
#: The node columns :func:`rows` looks at.
WATCHED = frozenset({'provision_state', 'last_error', 'maintenance'})


def rows(before: Mapping[str, Any], changes: Mapping[str, Any],
         conductor: str | None,
         notes: Sequence[Mapping[str, Any]] = (),
         now: datetime.datetime | None = None) -> list[dict[str, Any]]:
    """The history entries of one write of a node.

    :param before: the node's columns as loaded (``id``, ``uuid``,
        ``owner``, ``lessee``, the states, ``last_error``, ``maintenance``
        and ``provision_updated_at`` at least).
    :param changes: the columns the write sets.
    :param notes: entries noted on the node (see :func:`entry`'s
        arguments), written as they are.
    :param now: the time of the write (default: now).
    """
    if WATCHED.isdisjoint(changes) and not notes:
        return []
    # Straight-line code on purpose, reading the few columns it needs
    # instead of merging the whole row: this runs in nearly every node
    # write of a busy conductor, and its cost is part of what recording
    # history costs (doc/performance/history-and-events.md, issue 31).
    now = now or base.utcnow()
    old_state = before.get('provision_state')
    state = changes.get('provision_state', old_state)
    common = {'node_id': before['id'], 'node_uuid': before['uuid'],
              'owner': changes.get('owner', before.get('owner')),
              'lessee': changes.get('lessee', before.get('lessee')),
              'conductor': conductor, 'created_at': now, 'state': state}
    result = []
    error = changes.get('last_error', before.get('last_error'))
    new_error = (error if 'last_error' in changes
                 and error != before.get('last_error') else None)
    if state != old_state:
        target = changes.get('target_provision_state',
                             before.get('target_provision_state'))
        failed = state in states.FAILURE_STATES or bool(new_error)
        started = before.get('provision_updated_at')
        text = 'Provision state %s -> %s' % (old_state, state)
        if target:
            text += ' (target %s)' % target
        duration = None
        if started is not None:
            duration = int((now - started).total_seconds())
            text += ' after %d s' % duration
        if failed and error:
            text += ': %s' % error
        result.append(event_obj.entry(
            TRANSITION, text, event_obj.ERROR if failed else event_obj.INFO,
            target_provision_state=target, duration_seconds=duration,
            **common))
    elif new_error:
        result.append(event_obj.entry(ERROR_TYPE, new_error, event_obj.ERROR,
                                      **common))
    maintenance = changes.get('maintenance', before.get('maintenance'))
    if bool(maintenance) != bool(before.get('maintenance')):
        if maintenance:
            text = 'Maintenance on: %s' % (changes.get(
                'maintenance_reason', before.get('maintenance_reason'))
                or 'no reason given')
        else:
            text = 'Maintenance off'
        fault = changes.get('fault', before.get('fault'))
        if fault:
            text += ' (fault: %s)' % fault
        result.append(event_obj.entry(MAINTENANCE, text, **common))
    for note in notes:
        fields = note.get('fields')
        result.append(event_obj.entry(
            note['event_type'], note['event'],
            note.get('severity', event_obj.INFO),
            **(dict(common, **fields) if fields else common)))
    return result


def note(event_type: str, event: str, severity: str = event_obj.INFO,
         **fields: Any) -> dict[str, Any]:
    """An entry to note on a node (see :meth:`Node.note`).

    :param fields: columns of the entry other than the node's
        (``lease_uuid``), or instead of them (``lessee``: a lease's
        project may read what was done to the node for its lease).
    """
    entry: dict[str, Any] = {'event_type': event_type, 'event': event,
                             'severity': severity}
    if fields:
        entry['fields'] = fields
    return entry


def lease_rows(conn: sa.Connection, held: Sequence[tuple[int, int]],
               text: str) -> list[dict[str, Any]]:
    """Entries ``text % {'lease': uuid, 'project': project}`` for the
    nodes of ``held``, (node id, lease id) pairs, each naming its pair's
    lease (read in ``conn``); of two pairs of one node, the earlier
    lease's. The lessee of the entry is the lease's project, which may
    read it."""
    if not held:
        return []
    nodes, leases, booked = _NODES, _LEASES, _LEASE_NODES
    wanted = set(held)
    found = conn.execute(sa.select(
        nodes.c.id, nodes.c.uuid, nodes.c.owner, nodes.c.provision_state,
        leases.c.id.label('lease_id'), leases.c.uuid.label('lease'),
        leases.c.project).select_from(
            booked.join(nodes, nodes.c.id == booked.c.node_id)
            .join(leases, leases.c.id == booked.c.lease_id)).where(
                booked.c.node_id.in_(base.bucketed(sorted(
                    {node for node, _lease in wanted}))),
                booked.c.lease_id.in_(base.bucketed(sorted(
                    {lease for _node, lease in wanted}))))
        .order_by(nodes.c.id, leases.c.start_at, leases.c.id)).all()
    seen: set[int] = set()
    result = []
    for row in found:
        if row.id in seen or (row.id, row.lease_id) not in wanted:
            continue
        seen.add(row.id)
        result.append(event_obj.entry(
            LEASE, text % {'lease': row.lease, 'project': row.project},
            node_id=row.id, node_uuid=row.uuid, owner=row.owner,
            lessee=row.project, lease_uuid=row.lease,
            state=row.provision_state))
    return result


# ---- reading ----------------------------------------------------------------

def list_for(db: db_api.Database, node_id: int, limit: int | None,
             marker: Mapping[str, Any] | None = None,
             sort_dir: str = 'asc') -> list[dict[str, Any]]:
    """A node's entries in the order they were recorded (``marker``: the
    last entry of the previous page)."""
    ascending = sort_dir == 'asc'
    query = sa.select(TABLE).where(TABLE.c.node_id == node_id).order_by(
        TABLE.c.id.asc() if ascending else TABLE.c.id.desc())
    if marker is not None:
        query = query.where(TABLE.c.id > marker['id'] if ascending
                            else TABLE.c.id < marker['id'])
    if limit:
        query = query.limit(limit)
    with db.reader() as conn:
        return [dict(row) for row in conn.execute(query).mappings()]


def get(db: db_api.Database, node_id: int, uuid: str) -> dict[str, Any]:
    """One entry of a node.

    :raises NodeHistoryNotFound: the node has no such entry.
    """
    with db.reader() as conn:
        row = conn.execute(sa.select(TABLE).where(
            TABLE.c.node_id == node_id,
            TABLE.c.uuid == uuid.lower())).mappings().first()
    if row is None:
        raise exception.NodeHistoryNotFound(entry=uuid[:40])
    return dict(row)
