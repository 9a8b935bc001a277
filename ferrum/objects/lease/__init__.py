# SPDX-License-Identifier: Apache-2.0
"""Leases, and their SQL.

A lease row says what was asked (project, resource class, traits, count or
candidate nodes, window) and where it stands (``status``, see
:mod:`ferrum.common.lease_statuses`). Its ``lease_nodes`` rows say which nodes
it holds over ``[start_at, block_end)``, ``block_end`` being the end plus
the cleaning margin.

No node is ever held by two leases over overlapping windows, and that is
the database's doing, not Python's:

* on PostgreSQL, migration 0006's exclusion constraint refuses the second
  row whatever the code does; a creator that loses a race gets the
  constraint's error and picks again (:meth:`Lease.create`);
* on SQLite, the check (:func:`overlapping`) and the insert run in one
  ``BEGIN IMMEDIATE`` transaction (:meth:`ferrum.db.api.Database.writer`),
  so no other writer runs between them.

The ``lease_nodes`` rows are read in :mod:`ferrum.objects.lease.nodes`;
the engine's writes to the nodes themselves are in
:mod:`ferrum.objects.lease.holds` (the start) and
:mod:`ferrum.objects.lease.ends` (the end). Status changes are
conditional UPDATEs on the status (and, for the engine's transitions, on
``conductor_affinity``): of several conductors trying one transition,
one wins.
"""

from __future__ import annotations

import builtins
import datetime
from collections.abc import Callable, Collection, Mapping, Sequence
from typing import Any

import sqlalchemy as sa
from oslo_db import exception as db_exc

from ferrum.common import exception
from ferrum.common import lease_statuses as statuses
from ferrum.common import plural
from ferrum.db import api as db_api
from ferrum.db import models
from ferrum.objects import base
from ferrum.objects import event as event_obj
from ferrum.objects.lease import classes as lease_classes
from ferrum.objects.lease import nodes as lease_nodes

TABLE = models.table(models.Lease)
NODES = lease_nodes.NODES
FIELDS: tuple[str, ...] = tuple(c.name for c in TABLE.columns)
_INSERTED = tuple(name for name in FIELDS if name != 'id')
#: Picking nodes again after losing them to a concurrent creator: each
#: loss means another lease took nodes, so this bounds only contention.
_CREATE_ATTEMPTS = 10
_INSERT = sa.insert(TABLE).values(
    {name: sa.bindparam(name) for name in _INSERTED}).returning(*TABLE.c)
_INSERT_NODE = sa.insert(NODES)
#: Work done in a claim's transaction, on the ids of the leases it moved.
ClaimHook = Callable[[sa.Connection, Sequence[int]], None]
#: Pick nodes for a new lease inside its creating transaction: returns
#: (id, uuid) of each node, or raises LeaseConflict saying why there are
#: not enough.
Picker = Callable[[sa.Connection, 'Lease'], Sequence[tuple[int, str]]]


class Lease(base.Row):
    """One lease row plus the UUIDs of its nodes."""

    COLUMNS = FIELDS
    JSON_COLUMNS = frozenset({'traits', 'candidate_nodes', 'extra'})
    DICT_COLUMNS = frozenset({'extra'})

    id: int
    uuid: str
    name: str | None
    project: str
    owner: str | None
    resource_class: str | None
    traits: list[str] | None
    candidate_nodes: list[str] | None
    count: int
    start_at: datetime.datetime
    end_at: datetime.datetime
    cleaning_margin: int
    status: str
    before_end_at: datetime.datetime | None
    before_end_fired_at: datetime.datetime | None
    last_error: str | None
    extra: dict[str, Any]
    conductor_affinity: int | None
    placement_class: bool
    class_created: bool
    shared_pool: bool
    created_at: datetime.datetime
    updated_at: datetime.datetime | None
    nodes: list[str]

    def __init__(self, db: Any, row: Mapping[Any, Any],
                 nodes: Sequence[str] = ()) -> None:
        super().__init__(db, row)
        self.nodes = list(nodes)

    def __repr__(self) -> str:
        return '<Lease %s %s>' % (self.uuid, self.status)

    @property
    def block_end(self) -> datetime.datetime:
        return lease_nodes.block_end(self.end_at, self.cleaning_margin)

    # ---- reading ----------------------------------------------------------

    @classmethod
    def get(cls, db: db_api.Database, ident: int | str) -> Lease:
        """A lease by id, UUID or (unique) name.

        :raises LeaseNotFound: none matches.
        :raises InvalidParameterValue: several leases have that name.
        """
        column, value = base.ident_column(ident)
        with db.reader() as conn:
            rows = conn.execute(sa.select(TABLE).where(
                TABLE.c[column] == value).limit(2)).mappings().all()
            if not rows:
                raise exception.LeaseNotFound(lease=ident)
            if len(rows) > 1:
                raise exception.InvalidParameterValue(
                    reason='Several leases are called "%s"; name the lease '
                           'by its UUID.' % str(ident)[:255])
            lease_id = rows[0]['id']
            return cls(db, rows[0], lease_nodes.node_uuids(
                conn, [lease_id])[lease_id])

    @classmethod
    def list(cls, db: db_api.Database,
             filters: Mapping[str, Any] | None = None,
             limit: int | None = None, sort_key: str = 'id',
             sort_dir: str = 'asc', marker: Lease | None = None
             ) -> builtins.list[Lease]:
        """Leases matching ``filters``, paged.

        Filters: ``status`` (a collection), ``project``, ``node_id`` (the
        lease has or had that node), ``window`` (start, end): leases whose
        window overlaps it.
        """
        query = sa.select(TABLE)
        for key, value in (filters or {}).items():
            if key == 'status':
                query = query.where(TABLE.c.status.in_(sorted(value)))
            elif key == 'project':
                query = query.where(TABLE.c.project == value)
            elif key == 'node_id':
                query = query.where(sa.select(NODES.c.id).where(
                    NODES.c.lease_id == TABLE.c.id,
                    NODES.c.node_id == value).exists())
            elif key == 'window':
                query = query.where(TABLE.c.start_at < value[1],
                                    TABLE.c.end_at > value[0])
            else:
                raise exception.InvalidParameterValue(
                    reason='Unknown lease filter %s' % key)
        query = base.paginate(query, TABLE, limit, sort_key, sort_dir, marker)
        with db.reader() as conn:
            rows = conn.execute(query).mappings().all()
            nodes = lease_nodes.node_uuids(conn, [row['id'] for row in rows])
        return [cls(db, row, nodes[row['id']]) for row in rows]

    @classmethod
    def matching(cls, db: db_api.Database,
                 where: Sequence[sa.ColumnElement[bool]],
                 limit: int | None = None) -> builtins.list[Lease]:
        """The leases matching every clause, oldest start first, in one
        query (without their ``nodes``, which the engine reads apart).

        :param limit: at most this many (the first ones), None: all.
        """
        with db.reader() as conn:
            return [cls(db, row) for row in conn.execute(
                sa.select(TABLE).where(*where).order_by(
                    TABLE.c.start_at, TABLE.c.id).limit(limit)).mappings()]

    def node_rows(self, holding_only: bool = True
                  ) -> builtins.list[lease_nodes.LeaseNodeRow]:
        """The lease's ``lease_nodes`` rows, as
        :func:`ferrum.objects.lease.nodes.node_rows_of`."""
        return lease_nodes.node_rows_of(self._db, [self.id],
                                          holding_only)[self.id]

    # ---- writing ----------------------------------------------------------

    @classmethod
    def create(cls, db: db_api.Database, values: Mapping[str, Any],
               pick: Picker) -> Lease:
        """Insert a lease and its nodes, all or nothing.

        ``pick`` runs in the inserting transaction; on PostgreSQL a
        concurrent creator may still commit the same node first, and the
        exclusion constraint then refuses this insert, so the lease is
        picked again on a fresh transaction.

        :raises LeaseConflict: no nodes enough (from ``pick``), or lost
            every attempt to concurrent creators or node deletions.
        """
        row: dict[str, Any] = {'uuid': base.new_uuid(),
                               'status': statuses.PENDING, 'extra': {},
                               'placement_class': False,
                               'class_created': False,
                               'shared_pool': False,
                               'created_at': base.utcnow()}
        row.update(values)
        base.check_columns(row, FIELDS, 'lease')
        for _attempt in range(_CREATE_ATTEMPTS):
            try:
                with db.writer() as conn:
                    created = conn.execute(_INSERT, {
                        n: row.get(n) for n in _INSERTED}).mappings().one()
                    lease = cls(db, created)
                    # In id order, so that concurrent creators meet on
                    # their first common node rather than deadlock.
                    picked = sorted(pick(conn, lease))
                    conn.execute(_INSERT_NODE, [
                        {'lease_id': lease.id, 'node_id': node_id,
                         'project': lease.project,
                         'start_at': lease.start_at, 'end_at': lease.end_at,
                         'block_end': lease.block_end, 'holding': True,
                         'node_extra': None} for node_id, _uuid in picked])
                    lease.nodes = [uuid for _id, uuid in picked]
                    event_obj.add(db, [event_obj.lease_entry(
                        dict(created), 'created', lease.status)])
                return lease
            except db_exc.DBError as exc:
                # A node picked was deleted meanwhile (the deletion locks
                # the node's row, see lease_holds.booked_by): its row's
                # foreign key fails, and the pick finds others.
                if not (lease_nodes.is_overlap_error(exc)
                        or isinstance(exc, db_exc.DBReferenceError)):
                    raise
        raise exception.LeaseConflict(reason=(
            'Other leases kept taking the matching nodes first, or they '
            'were deleted (%d attempts); try again.' % _CREATE_ATTEMPTS))

    def set_end(self, end_at: datetime.datetime,
                before_end_at: datetime.datetime | None) -> None:
        """Move the end; an extension checks only the added time.

        The nodes stay the same: they are never swapped under a lease.

        :raises LeaseConflict: another lease holds one of the nodes in the
            added time, or the lease changed status meanwhile.
        """
        new_block = lease_nodes.block_end(end_at, self.cleaning_margin)
        try:
            with self._db.writer() as conn:
                if new_block > self.block_end:
                    node_ids = set(conn.execute(sa.select(
                        NODES.c.node_id).where(NODES.c.lease_id == self.id,
                                               NODES.c.holding)).scalars())
                    taken = lease_nodes.overlapping(
                        conn, node_ids, self.block_end, new_block,
                        exclude_lease=self.id)
                    if taken:
                        raise exception.LeaseConflict(reason=(
                            'The lease cannot end at %s: %s booked by '
                            'other leases before then (with the cleaning '
                            'margin).' % (end_at.isoformat(), plural.count(
                                len(taken), 'of its nodes is',
                                'of its nodes are'))))
                fired = (self.before_end_fired_at
                         if before_end_at == self.before_end_at else None)
                done = conn.execute(sa.update(TABLE).where(
                    TABLE.c.id == self.id, TABLE.c.status == self.status,
                    TABLE.c.end_at == self.end_at).values(
                        end_at=end_at, before_end_at=before_end_at,
                        before_end_fired_at=fired,
                        updated_at=base.utcnow())).rowcount
                if not done:
                    raise exception.LeaseConflict(reason=(
                        'Lease %s changed meanwhile; read it again.'
                        % self.uuid))
                conn.execute(sa.update(NODES).where(
                    NODES.c.lease_id == self.id).values(
                        end_at=end_at, block_end=new_block))
        except db_exc.DBError as exc:
            if not lease_nodes.is_overlap_error(exc):
                raise
            raise exception.LeaseConflict(reason=(
                'The lease cannot end at %s: its nodes are booked by other '
                'leases before then.' % end_at.isoformat())) from exc
        self._mark_saved({'end_at': end_at, 'before_end_at': before_end_at,
                          'before_end_fired_at': fired})

    def save(self) -> None:
        """Write ``name`` and ``extra`` (the rest has its own methods)."""
        changes = self.changes()
        unexpected = set(changes) - {'name', 'extra'}
        if unexpected:
            raise ValueError('use set_end/transition for %s'
                             % sorted(unexpected))
        if not changes:
            return
        with self._db.writer() as conn:
            conn.execute(sa.update(TABLE).where(TABLE.c.id == self.id).values(
                updated_at=base.utcnow(), **changes))
        self._mark_saved(changes)

    def transition(self, event: str, conductor_id: int | None = None,
                   fence: bool = False,
                   where: Sequence[sa.ColumnElement[bool]] = (),
                   **values: Any) -> bool:
        """Fire ``event`` if the lease is still as loaded.

        :param conductor_id: the new ``conductor_affinity``.
        :param fence: also require ``conductor_affinity`` unchanged (the
            engine finishing its own transition).
        :param where: more conditions, checked in the same UPDATE.
        :returns: whether this call made the change.
        """
        target = statuses.next_status(self.status, event)
        query = sa.update(TABLE).where(TABLE.c.id == self.id,
                                       TABLE.c.status == self.status, *where)
        if fence:
            query = query.where(
                TABLE.c.conductor_affinity.is_not_distinct_from(
                    self.conductor_affinity))
        changes = dict(values, status=target, conductor_affinity=conductor_id)
        with self._db.writer() as conn:
            if not conn.execute(query.values(
                    updated_at=base.utcnow(), **changes)).rowcount:
                return False
            if target in statuses.FINAL:
                lease_nodes.let_go(conn, [self.id])
            event_obj.add(self._db, [event_obj.lease_entry(
                self._loaded, event_obj.LEASE_EVENTS[target], target,
                values.get('last_error'))])
        self._mark_saved(changes)
        return True

    @classmethod
    def claim(cls, db: db_api.Database, ids: Collection[int], event: str,
              conductor_id: int, where: Sequence[sa.ColumnElement[bool]],
              then: ClaimHook | None = None) -> builtins.list[Lease]:
        """Fire ``event`` on those of ``ids`` still in a status it leaves
        and matching ``where``, naming ``conductor_id``: one conditional
        UPDATE, so of several conductors claiming at once each lease goes
        to exactly one (the others' UPDATE no longer matches it).

        :param then: called in the same transaction with the ids moved.
        :returns: the leases this call moved (without their ``nodes``).
        """
        sources = sorted(statuses.sources(event))
        (target,) = {statuses.next_status(s, event) for s in sources}
        if not ids:
            return []
        with db.writer() as conn:
            rows = conn.execute(sa.update(TABLE).where(
                TABLE.c.id.in_(base.bucketed(sorted(ids))),
                TABLE.c.status.in_(sources), *where).values(
                    status=target, conductor_affinity=conductor_id,
                    updated_at=base.utcnow()).returning(*TABLE.c)
            ).mappings().all()
            # The lease's event first: what ``then`` does follows from it.
            event_obj.add(db, [event_obj.lease_entry(
                dict(row), event_obj.LEASE_EVENTS[target], target)
                for row in rows])
            if rows and then is not None:
                then(conn, [row['id'] for row in rows])
        return [cls(db, row) for row in rows]

    @classmethod
    def finish(cls, db: db_api.Database, leases: Collection[Lease],
               event: str, conductor_id: int) -> set[int]:
        """Fire ``event`` on ``leases``, which this conductor carries (their
        status as loaded and ``conductor_affinity`` = ``conductor_id``),
        in one UPDATE per status; a final status lets their nodes go.

        :returns: the ids of the leases this call moved.
        """
        moved: set[int] = set()
        by_status: dict[str, builtins.list[int]] = {}
        for lease in leases:
            by_status.setdefault(lease.status, []).append(lease.id)
        with db.writer() as conn:
            for status, ids in sorted(by_status.items()):
                target = statuses.next_status(status, event)
                done = set(conn.execute(sa.update(TABLE).where(
                    TABLE.c.id.in_(base.bucketed(sorted(ids))),
                    TABLE.c.status == status,
                    TABLE.c.conductor_affinity == conductor_id).values(
                        status=target, conductor_affinity=None,
                        last_error=None, updated_at=base.utcnow()
                ).returning(TABLE.c.id)).scalars())
                if done and target in statuses.FINAL:
                    lease_nodes.let_go(conn, done)
                event_obj.add(db, [event_obj.lease_entry(
                    lease._loaded, event_obj.LEASE_EVENTS[target], target)
                    for lease in leases if lease.id in done])
                moved |= done
        return moved

    def take_over(self, dead: int | None, me: int) -> bool:
        """Adopt the transition a dead conductor left (compare-and-set)."""
        with self._db.writer() as conn:
            won = bool(conn.execute(sa.update(TABLE).where(
                TABLE.c.id == self.id, TABLE.c.status == self.status,
                TABLE.c.conductor_affinity.is_not_distinct_from(dead)
            ).values(conductor_affinity=me)).rowcount == 1)
        if won:
            self._mark_saved({'conductor_affinity': me})
        return won

    def record_error(self, message: str | None) -> None:
        if message == self.last_error:
            return
        with self._db.writer() as conn:
            conn.execute(sa.update(TABLE).where(TABLE.c.id == self.id).values(
                last_error=message))
        self._mark_saved({'last_error': message})

    def class_was_created(self) -> None:
        """The lease's reservation class now exists in Placement (written
        once: a lease whose row says so already costs no write)."""
        if not self.class_created:
            lease_classes.created(self._db, [self.id])
            self._mark_saved({'class_created': True})

    def fire_before_end(self, now: datetime.datetime) -> bool:
        """Mark before_end fired, once, however many conductors try."""
        with self._db.writer() as conn:
            won = bool(conn.execute(sa.update(TABLE).where(
                TABLE.c.id == self.id, TABLE.c.status == statuses.ACTIVE,
                TABLE.c.before_end_fired_at.is_(None),
                TABLE.c.before_end_at <= now).values(
                    before_end_fired_at=now)).rowcount == 1)
            if won:
                event_obj.add(self._db, [event_obj.lease_entry(
                    self._loaded, 'ending soon (ends at %s+00:00)'
                    % self.end_at.isoformat(), self.status)])
        if won:
            self._mark_saved({'before_end_fired_at': now})
        return won
