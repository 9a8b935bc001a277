# SPDX-License-Identifier: Apache-2.0
"""Allocations: a consumer's reservation of one node, and their SQL.

An allocation is created ``allocating`` by a conductor, which stamps its
own id in ``conductor_affinity``, and ends ``active`` (it holds a node) or
``error`` (``last_error`` says why). Every write the allocation process
makes is fenced on ``conductor_affinity``: a conductor that was declared
dead and taken over cannot overwrite the work of its successor (the
allocation spec's "HA and take over").

The link to the node is written in one transaction on both sides: the
allocation's ``node_id`` and ``state``, the node's ``allocation_id``,
``instance_uuid`` and ``instance_info['traits']``. The unique constraints on
``allocations.node_id`` and ``nodes.instance_uuid`` make a double
allocation impossible whatever the Python code does.
"""

from __future__ import annotations

import builtins
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

import sqlalchemy as sa
from oslo_db import exception as db_exc

from ferrum.common import exception
from ferrum.db import api as db_api
from ferrum.db import models
from ferrum.objects import base
from ferrum.objects import event as event_obj
from ferrum.objects import node as node_obj
from ferrum.objects import placement_queue

TABLE = models.table(models.Allocation)
TRAITS = models.table(models.AllocationTrait)
FIELDS: tuple[str, ...] = tuple(c.name for c in TABLE.columns)

ALLOCATING = 'allocating'
ACTIVE = 'active'
ERROR = 'error'
STATES = frozenset({ALLOCATING, ACTIVE, ERROR})
#: The states of an allocation in flight or holding a node.
LIVE = frozenset({ALLOCATING, ACTIVE})

#: Columns the list endpoint filters on with plain equality.
EQUALITY_FILTERS = frozenset({'state', 'resource_class', 'node_id', 'owner',
                              'conductor_affinity'})
_NODES = node_obj.TABLE
_SELECT = sa.select(TABLE, _NODES.c.uuid.label('node_uuid')).select_from(
    TABLE.outerjoin(_NODES, TABLE.c.node_id == _NODES.c.id))
_TRAITS_OF = sa.select(TRAITS.c.allocation_id, TRAITS.c.trait).where(
    TRAITS.c.allocation_id.in_(sa.bindparam('ids', expanding=True)))
# Prebuilt, as for nodes: building these statements cost more than running
# them on SQLite.
_INSERTED = tuple(name for name in FIELDS if name != 'id')
_INSERT = sa.insert(TABLE).values(
    {name: sa.bindparam(name) for name in _INSERTED}).returning(*TABLE.c)
_INSERT_TRAIT = sa.insert(TRAITS)
_INSTANCE_TAKEN = sa.select(_NODES.c.id).where(
    _NODES.c.instance_uuid == sa.bindparam('b_uuid'))
_ACTIVATE = sa.update(TABLE).where(
    TABLE.c.id == sa.bindparam('b_id'), TABLE.c.state == ALLOCATING,
    TABLE.c.conductor_affinity == sa.bindparam('b_conductor')).values(
        state=ACTIVE, last_error=None)
_FAIL = sa.update(TABLE).where(
    TABLE.c.id == sa.bindparam('b_id'), TABLE.c.state == ALLOCATING,
    TABLE.c.conductor_affinity == sa.bindparam('b_conductor')).values(
        state=ERROR, node_id=None).returning(TABLE.c.uuid, TABLE.c.owner,
                                             TABLE.c.state)
_GET = {column: _SELECT.where(TABLE.c[column] == sa.bindparam('b_ident'))
        for column in base.IDENT_COLUMNS}
#: The node columns a claim (and a release) writes.
_TAKEN = ('allocation_id', 'instance_uuid', 'instance_info')
#: The node's instance_info as stored (JSON text), to fence on it.
RAW_INSTANCE_INFO = sa.type_coerce(_NODES.c.instance_info, sa.Text)


def take_node_statement(clauses: Sequence[sa.ColumnElement[bool]]
                        ) -> sa.Update:
    """The conditional UPDATE that gives a node to an allocation (see
    :meth:`Allocation.claim`): a node nobody holds and that still passes
    ``clauses`` (the candidate filters), by id.

    Fenced on the instance_info the sample read (as text; '' for NULL), so
    a change made meanwhile (an operator's PATCH) is never overwritten.
    """
    return sa.update(_NODES).where(
        _NODES.c.id == sa.bindparam('b_node'),
        _NODES.c.reservation.is_(None), _NODES.c.allocation_id.is_(None),
        sa.func.coalesce(RAW_INSTANCE_INFO, '') == sa.bindparam('b_raw_info'),
        *clauses).values(
            instance_uuid=sa.bindparam('instance_uuid'),
            allocation_id=sa.bindparam('allocation_id'),
            instance_info=sa.bindparam('instance_info'),
            updated_at=sa.bindparam('updated_at'))


class Allocation(base.Row):
    """One allocation row plus its ``traits`` and its node's UUID."""

    COLUMNS = FIELDS
    JSON_COLUMNS = frozenset({'candidate_nodes', 'extra'})
    DICT_COLUMNS = frozenset({'extra'})

    id: int
    uuid: str
    name: str | None
    node_id: int | None
    state: str
    last_error: str | None
    resource_class: str | None
    candidate_nodes: list[str] | None
    extra: dict[str, Any]
    owner: str | None
    conductor_affinity: int | None
    node_uuid: str | None
    traits: list[str]

    def __init__(self, db: Any, row: Mapping[Any, Any],
                 traits: Sequence[str] = ()) -> None:
        values = dict(row)
        values.setdefault('node_uuid', None)
        super().__init__(db, values)
        self.traits = sorted(traits)

    def __repr__(self) -> str:
        return '<Allocation %s %s>' % (self.uuid, self.state)

    # ---- reading ----------------------------------------------------------

    @classmethod
    def get(cls, db: db_api.Database, ident: int | str,
            with_traits: bool = True) -> Allocation:
        """Load an allocation by id, UUID or name.

        :param with_traits: also load ``traits`` (else they read as []).
        :raises AllocationNotFound: when none matches.
        """
        column, value = base.ident_column(ident)
        with db.reader() as conn:
            row = conn.execute(_GET[column], {'b_ident': value}
                               ).mappings().first()
            if row is None:
                raise exception.AllocationNotFound(allocation=ident)
            traits = (_traits_of(conn, [row['id']])[row['id']]
                      if with_traits else [])
            return cls(db, row, traits)

    @classmethod
    def get_by_node(cls, db: db_api.Database, node_id: int
                    ) -> Allocation | None:
        with db.reader() as conn:
            row = conn.execute(_SELECT.where(TABLE.c.node_id == node_id)
                               ).mappings().first()
            if row is None:
                return None
            return cls(db, row, _traits_of(conn, [row['id']])[row['id']])

    @classmethod
    def list(cls, db: db_api.Database,
             filters: Mapping[str, Any] | None = None,
             limit: int | None = None, sort_key: str = 'id',
             sort_dir: str = 'asc', marker: Allocation | None = None
             ) -> builtins.list[Allocation]:
        """Allocations matching ``filters`` (see EQUALITY_FILTERS), paged."""
        query = _SELECT
        for key, value in (filters or {}).items():
            if key not in EQUALITY_FILTERS:
                raise exception.InvalidParameterValue(
                    reason='Unknown allocation filter %s' % key)
            query = query.where(TABLE.c[key] == value)
        query = base.paginate(query, TABLE, limit, sort_key, sort_dir, marker)
        with db.reader() as conn:
            rows = conn.execute(query).mappings().all()
            traits = _traits_of(conn, [row['id'] for row in rows])
        return [cls(db, row, traits[row['id']]) for row in rows]

    @staticmethod
    def ids_allocating(db: db_api.Database, conductor_id: int
                       ) -> builtins.list[int]:
        """Ids of the ``allocating`` rows a conductor is responsible for."""
        with db.reader() as conn:
            return list(conn.execute(sa.select(TABLE.c.id).where(
                TABLE.c.state == ALLOCATING,
                TABLE.c.conductor_affinity == conductor_id)
                .order_by(TABLE.c.id)).scalars())

    # ---- writing ----------------------------------------------------------

    @classmethod
    def create(cls, db: db_api.Database, values: Mapping[str, Any],
               traits: Iterable[str] = (),
               then: Callable[[Allocation], object] | None = None,
               for_node: int | None = None) -> Allocation:
        """Insert an allocation and its traits in one transaction.

        :param then: called with the new allocation inside the same
            transaction (the allocation process tries its first claim
            there, so a quick allocation costs one transaction).
        :param for_node: the node a backfill records: its own
            ``instance_uuid`` is a UUID the allocation may take.
        :raises AllocationAlreadyExists: the UUID or name is taken, or a
            given UUID is already another node's instance_uuid.
        """
        row: dict[str, Any] = {'uuid': base.new_uuid(), 'state': ALLOCATING,
                               'extra': {}, 'created_at': base.utcnow()}
        row.update(values)
        base.check_columns(row, FIELDS, 'allocation')
        wanted = sorted(set(traits))
        try:
            with db.writer() as conn:
                # A UUID we generated cannot be anyone's instance_uuid.
                holder = None
                if 'uuid' in values:
                    holder = conn.execute(_INSTANCE_TAKEN,
                                          {'b_uuid': row['uuid']}).first()
                if holder is not None and holder.id != for_node:
                    raise exception.AllocationAlreadyExists(
                        field='uuid', value=row['uuid'])
                created = conn.execute(
                    _INSERT, {name: row.get(name) for name in _INSERTED}
                ).mappings().one()
                if wanted:
                    conn.execute(_INSERT_TRAIT, [
                        {'allocation_id': created['id'], 'trait': trait,
                         'created_at': row['created_at']} for trait in wanted])
                allocation = cls(db, created, wanted)
                event_obj.add(db, [event_obj.allocation_entry(
                    dict(created), 'created')])
                if then is not None:
                    then(allocation)
        except db_exc.DBDuplicateEntry as exc:
            field = (exc.columns or ['uuid'])[0]
            raise exception.AllocationAlreadyExists(
                field=field, value=row.get(field)) from exc
        if allocation.node_id is not None and allocation.node_uuid is None:
            allocation.node_uuid = _node_uuid(db, allocation.node_id)
        return allocation

    def save(self) -> None:
        """Write changed ``name`` and ``extra`` (what PATCH may change).

        :raises AllocationAlreadyExists: the new name is taken.
        """
        changes = {key: value for key, value in self.changes().items()
                   if key in ('name', 'extra')}
        if not changes:
            return
        changes['updated_at'] = base.utcnow()
        try:
            with self._db.writer() as conn:
                result = conn.execute(sa.update(TABLE).where(
                    TABLE.c.id == self.id).values(changes))
        except db_exc.DBDuplicateEntry:
            raise exception.AllocationAlreadyExists(
                field='name', value=changes.get('name')) from None
        if result.rowcount != 1:
            raise exception.AllocationNotFound(allocation=self.uuid)
        self._mark_saved(changes)

    @staticmethod
    def fail(db: db_api.Database, allocation_id: int, conductor_id: int,
             error: str) -> bool:
        """``allocating`` -> ``error``, if ``conductor_id`` still owns it.

        Returns False when the allocation is gone, finished, or was taken
        over by another conductor; nothing is written then.
        """
        with db.writer() as conn:
            failed = conn.execute(_FAIL, {
                'b_id': allocation_id, 'b_conductor': conductor_id,
                'last_error': error, 'updated_at': base.utcnow()}
            ).mappings().first()
            if failed is not None:
                event_obj.add(db, [event_obj.allocation_entry(
                    dict(failed), 'failed: %s' % error, event_obj.ERROR)])
        return failed is not None

    def mark_failed(self, conductor_id: int, error: str) -> bool:
        """:meth:`fail` this allocation, and show it on this object too."""
        if not Allocation.fail(self._db, self.id, conductor_id, error):
            return False
        self._mark_saved({'state': ERROR, 'last_error': error,
                          'node_id': None, 'updated_at': base.utcnow()})
        return True

    @staticmethod
    def take_over(db: db_api.Database, allocation_id: int, old: int,
                  new: int) -> bool:
        """Move an ``allocating`` row from conductor ``old`` to ``new``.

        A compare-and-set: of several conductors trying at once, exactly
        one gets True.
        """
        with db.writer() as conn:
            result = conn.execute(sa.update(TABLE).where(
                TABLE.c.id == allocation_id, TABLE.c.state == ALLOCATING,
                TABLE.c.conductor_affinity == old).values(
                    conductor_affinity=new, updated_at=base.utcnow()))
        return result.rowcount == 1

    def claim(self, conductor_id: int, node_id: int, node_uuid: str,
              take_node: sa.Update, params: Mapping[str, Any]) -> bool:
        """Give this allocation node ``node_id``, in one transaction.

        ``take_node`` is a conditional UPDATE of the node
        (:func:`take_node_statement`, with the filters of
        :mod:`ferrum.allocation.candidates`): it sets the node's
        ``instance_uuid``, ``allocation_id`` and ``instance_info`` only if,
        at this instant, no task holds the node's lock and the node still
        matches every filter. The allocation is updated only if it is still
        ``allocating`` under ``conductor_id``. The conditional UPDATE is the
        lock, the re-check and the write at once: there is no window in
        which a node was checked but could change before it was taken.

        :returns: False when the node no longer qualifies (someone else
            took it, or it changed or is locked).
        :raises AllocationGone: the allocation was deleted, finished or
            taken over meanwhile; nothing was written.
        """
        now = base.utcnow()
        try:
            with self._db.writer() as conn:
                if conn.execute(take_node, params).rowcount != 1:
                    return False
                placement_queue.nodes_changed(self._db, [node_id], _TAKEN)
                if conn.execute(_ACTIVATE, {
                        'b_id': self.id, 'b_conductor': conductor_id,
                        'node_id': node_id, 'updated_at': now}
                        ).rowcount != 1:
                    raise exception.AllocationGone(allocation=self.uuid)
                event_obj.add(self._db, [event_obj.allocation_entry(
                    dict(self._loaded, state=ACTIVE),
                    'active on node %s' % node_uuid, node_uuid=node_uuid)])
        except db_exc.DBDuplicateEntry:
            # Another allocation won the node (or our UUID is some other
            # node's instance_uuid) between our check and our write.
            return False
        self._mark_saved({'node_id': node_id, 'state': ACTIVE,
                          'last_error': None, 'updated_at': now})
        self.node_uuid = node_uuid
        return True

    @classmethod
    def create_active(cls, db: db_api.Database, values: Mapping[str, Any],
                      traits: Iterable[str], node: node_obj.Node
                      ) -> Allocation:
        """Insert an allocation already holding ``node`` (backfill, 1.58).

        The caller holds the node's lock; the node's ``allocation_id``,
        ``instance_uuid`` and ``instance_info['traits']`` are written in the
        same transaction.
        """
        wanted = sorted(set(traits))
        with db.writer():
            allocation = cls.create(db, dict(values, state=ACTIVE,
                                             node_id=node.id), wanted,
                                    for_node=node.id)
            node.instance_uuid = allocation.uuid
            node.allocation_id = allocation.id
            node.instance_info = dict(node.instance_info, traits=wanted)
            node.save()
        return allocation

def uuids_by_id(db: db_api.Database, ids: Iterable[int]) -> dict[int, str]:
    """allocation id -> UUID, for the given ids, in one query."""
    wanted = list(ids)
    if not wanted:
        return {}
    with db.reader() as conn:
        return {row.id: row.uuid for row in conn.execute(
            sa.select(TABLE.c.id, TABLE.c.uuid).where(TABLE.c.id.in_(wanted)))}


def _node_uuid(db: db_api.Database, node_id: int) -> str | None:
    with db.reader() as conn:
        uuid: str | None = conn.execute(sa.select(_NODES.c.uuid).where(
            _NODES.c.id == node_id)).scalar()
    return uuid


def _traits_of(conn: sa.Connection, ids: Sequence[int]
               ) -> dict[int, list[str]]:
    result: dict[int, list[str]] = {allocation_id: [] for allocation_id in ids}
    if ids:
        for row in conn.execute(_TRAITS_OF, {'ids': list(ids)}):
            result[row.allocation_id].append(row.trait)
    return result
