# SPDX-License-Identifier: Apache-2.0
"""Node: a bare-metal machine, and the queries that read and lock it.

A :class:`Node` is a plain object loaded from one row. ``save()`` writes
back only the fields that changed since it was loaded (nested dicts such as
``driver_internal_info`` included), so two tasks updating different fields
do not overwrite each other.

Locking is a conditional UPDATE (see :meth:`Node.reserve`): the database, not
a Python lock, decides who holds a node, which is what lets several
conductors share one database.
"""

from __future__ import annotations

import builtins
import datetime
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import sqlalchemy as sa
from oslo_db import exception as db_exc

from ferrum.common import exception
from ferrum.common import states
from ferrum.db import api as db_api
from ferrum.db import models
from ferrum.objects import base
from ferrum.objects import event as event_obj
from ferrum.objects import node_history
from ferrum.objects import placement_queue

TABLE = models.table(models.Node)
FIELDS: tuple[str, ...] = tuple(c.name for c in TABLE.columns)
_JSON_FIELDS = frozenset(c.name for c in TABLE.columns
                         if isinstance(c.type, models.JSONEncoded))
_DICT_FIELDS = frozenset({'driver_info', 'driver_internal_info',
                          'properties', 'instance_info', 'extra'})
#: Columns that may be used as list filters with plain equality.
EQUALITY_FILTERS = frozenset({
    'provision_state', 'maintenance', 'driver', 'resource_class',
    'conductor_group', 'owner', 'lessee', 'fault', 'instance_uuid',
    'reservation', 'conductor_affinity', 'power_state', 'target_power_state',
    'allocation_id', 'retired', 'chassis_id', 'parent_node',
    'instance_name'})


# The hot statements are built once: building a statement with 40-odd
# columns and computing its cache key cost more than running it on SQLite.
# Parameters whose name starts with "b_" are bound in WHERE clauses; other
# parameters name the columns an UPDATE sets.
_RETURNING = tuple(TABLE.c)
_INSERT = sa.insert(TABLE).returning(*_RETURNING)
_UPDATE = sa.update(TABLE).where(TABLE.c.id == sa.bindparam('b_id'))
_UPDATE_IF_HELD = sa.update(TABLE).where(
    TABLE.c.id == sa.bindparam('b_id'),
    TABLE.c.reservation == sa.bindparam('b_host'))
_DELETE = sa.delete(TABLE).where(TABLE.c.id == sa.bindparam('b_id'))
# Ports and traits go by their foreign keys' ON DELETE CASCADE; an
# allocation's key is ON DELETE SET NULL (an allocation may outlive a
# failed claim), so a node's allocations are deleted explicitly.
_ALLOCATIONS = models.table(models.Allocation)
_ALLOCATIONS_OF = _ALLOCATIONS.c.node_id == sa.bindparam('b_id')
_DELETE_ALLOCATIONS = sa.delete(_ALLOCATIONS).where(_ALLOCATIONS_OF)
_GET = {column: sa.select(TABLE).where(
    TABLE.c[column] == sa.bindparam('b_ident'))
    for column in base.IDENT_COLUMNS}
_RESERVE = {
    column: sa.update(TABLE).where(
        TABLE.c[column] == sa.bindparam('b_ident'),
        TABLE.c.reservation.is_(None)).values(
            reservation=sa.bindparam('b_host')).returning(*_RETURNING)
    for column in base.IDENT_COLUMNS}


class Node(base.Row):
    """One node row. Attribute names are the column names."""

    COLUMNS = FIELDS
    JSON_COLUMNS = _JSON_FIELDS
    DICT_COLUMNS = _DICT_FIELDS

    id: int
    uuid: str
    name: str | None
    driver: str
    driver_info: dict[str, Any]
    driver_internal_info: dict[str, Any]
    properties: dict[str, Any]
    instance_info: dict[str, Any]
    extra: dict[str, Any]
    provision_state: str
    target_provision_state: str | None
    power_state: str | None
    target_power_state: str | None
    maintenance: bool
    maintenance_reason: str | None
    fault: str | None
    last_error: str | None
    reservation: str | None
    conductor_affinity: int | None
    conductor_group: str
    resource_class: str | None
    instance_uuid: str | None
    allocation_id: int | None
    #: The chassis the node belongs to (chassis.id), if any.
    chassis_id: int | None
    owner: str | None
    lessee: str | None
    clean_step: dict[str, Any] | None
    deploy_step: dict[str, Any] | None
    automated_clean: bool | None
    description: str | None
    protected: bool
    protected_reason: str | None
    retired: bool
    retired_reason: str | None
    power_interface: str
    management_interface: str
    boot_interface: str
    deploy_interface: str
    inspect_interface: str
    vendor_interface: str
    network_interface: str
    firmware_interface: str
    shard: str | None
    parent_node: str | None
    disable_power_off: bool
    instance_name: str | None

    def __init__(self, db: Any, row: Mapping[Any, Any]) -> None:
        super().__init__(db, row)
        self._notes: builtins.list[dict[str, Any]] = []

    def __repr__(self) -> str:
        return '<Node %s %s>' % (self.uuid, self.provision_state)

    # ---- history ------------------------------------------------------------

    def note(self, entry: Mapping[str, Any]) -> None:
        """Record ``entry`` (:func:`ferrum.objects.node_history.note`) in
        the node's history with its next write, in that write's
        transaction."""
        self._notes.append(dict(entry))

    def history(self, changes: Mapping[str, Any],
                now: datetime.datetime | None = None
                ) -> builtins.list[dict[str, Any]]:
        """The history entries of writing ``changes`` at ``now`` (default:
        now), the notes included, which this forgets."""
        notes, self._notes = self._notes, []
        if not self._db.records_history:
            return []
        return node_history.rows(self._loaded, changes,
                                 self._db.history_host, notes, now)

    def as_dict(self) -> dict[str, Any]:
        return {name: getattr(self, name) for name in FIELDS}

    # ---- reading ----------------------------------------------------------

    @classmethod
    def get(cls, db: db_api.Database, ident: int | str) -> Node:
        """Load a node by id, UUID or name.

        :raises NodeNotFound: when no node matches.
        """
        column, value = base.ident_column(ident)
        with db.reader() as conn:
            row = conn.execute(_GET[column],
                               {'b_ident': value}).mappings().first()
        if row is None:
            raise exception.NodeNotFound(node=ident)
        return cls(db, row)

    @classmethod
    def list(cls, db: db_api.Database,
             filters: Mapping[str, Any] | None = None,
             limit: int | None = None,
             sort_key: str = 'id', sort_dir: str = 'asc',
             marker: Node | None = None) -> list[Node]:
        """Nodes matching ``filters`` (column equality; see EQUALITY_FILTERS).

        Extra filter keys: ``provision_state_in`` (a collection),
        ``uuid_in``, ``id_in``, ``shard_in``, ``associated`` (bool),
        ``reserved`` (bool), ``sharded`` (bool),
        ``description_contains`` (a substring). ``marker`` is the last node
        of the previous page.
        """
        query = base.paginate(_filtered(sa.select(TABLE), filters or {}),
                              TABLE, limit, sort_key, sort_dir, marker)
        with db.reader() as conn:
            return [cls(db, row) for row in conn.execute(query).mappings()]

    @staticmethod
    def list_columns(db: db_api.Database, columns: Iterable[str],
                     filters: Mapping[str, Any] | None = None,
                     limit: int | None = None) -> 'builtins.list[Any]':
        """Only ``columns`` of matching nodes: cheap rows for periodics."""
        query = _filtered(
            sa.select(*(TABLE.c[name] for name in columns)), filters or {})
        query = query.order_by(TABLE.c.id)
        if limit:
            query = query.limit(limit)
        with db.reader() as conn:
            return list(conn.execute(query))

    # ---- writing ----------------------------------------------------------

    @classmethod
    def create(cls, db: db_api.Database, values: Mapping[str, Any]) -> Node:
        """Insert a node; ``uuid`` is generated and state is enroll by default.

        :raises NodeAlreadyExists: on a duplicate UUID, name or instance UUID.
        """
        row: dict[str, Any] = {
            'uuid': base.new_uuid(), 'provision_state': states.ENROLL,
            'maintenance': False, 'conductor_group': '', 'protected': False,
            'retired': False, 'created_at': base.utcnow()}
        row.update({name: {} for name in _DICT_FIELDS})
        row.update(values)
        base.check_columns(row, FIELDS, 'node')
        try:
            with db.writer() as conn:
                created = conn.execute(_INSERT, row).mappings().one()
                placement_queue.uuids_changed(db, [created['uuid']])
        except db_exc.DBDuplicateEntry as exc:
            field = (exc.columns or ['uuid'])[0]
            raise exception.NodeAlreadyExists(
                field=field, value=row.get(field)) from exc
        return cls(db, created)

    def save(self, **extra_values: Any) -> None:
        """Write the changed fields (plus ``extra_values``) to the database.

        Also stamps ``updated_at`` and, when the provision state changed,
        ``provision_updated_at``.
        """
        changes = self.changes()
        changes.update(extra_values)
        if not changes and not self._notes:
            return
        now = base.utcnow()
        history = self.history(changes, now)
        changes['updated_at'] = now
        if 'provision_state' in changes:
            changes['provision_updated_at'] = now
        try:
            with self._db.writer() as conn:
                result = conn.execute(_UPDATE, dict(changes, b_id=self.id))
                if result.rowcount == 1:
                    placement_queue.nodes_changed(self._db, [self.id],
                                                  changes)
                    event_obj.add(self._db, history)
        except db_exc.DBDuplicateEntry as exc:
            field = (exc.columns or ['name'])[0]
            raise exception.NodeAlreadyExists(
                field=field, value=changes.get(field)) from exc
        if result.rowcount != 1:
            raise exception.NodeNotFound(node=self.uuid)
        self._mark_saved(changes)

    def refresh(self) -> None:
        """Reload every field from the database, dropping unsaved changes."""
        fresh = Node.get(self._db, self.id)
        self.__dict__.update(fresh.__dict__)

    def destroy(self) -> int:
        """Delete the node with everything that names it, in one transaction.

        Its ports and traits go with it, and so does every allocation that
        names it (as in Ironic): nothing is left pointing at a node that no
        longer exists. The caller decided the node may go.

        :returns: how many allocations were deleted with it.
        """
        with self._db.writer() as conn:
            placement_queue.allocations_deleting(
                self._db, _ALLOCATIONS_OF, {'b_id': self.id})
            allocations = conn.execute(_DELETE_ALLOCATIONS,
                                       {'b_id': self.id}).rowcount
            result = conn.execute(_DELETE, {'b_id': self.id})
            if result.rowcount != 1:
                raise exception.NodeNotFound(node=self.uuid)
            placement_queue.uuids_changed(self._db, [self.uuid])
        return int(allocations)

    # ---- locking ------------------------------------------------------------

    @classmethod
    def reserve(cls, db: db_api.Database, host: str,
                ident: int | str) -> Node:
        """Lock a node for ``host`` and return it, as one conditional UPDATE.

        :raises NodeLocked: when another host (or task) holds the lock.
        :raises NodeNotFound: when the node does not exist.
        """
        column, value = base.ident_column(ident)
        with db.writer() as conn:
            row = conn.execute(_RESERVE[column], {
                'b_ident': value, 'b_host': host}).mappings().first()
        if row is not None:
            return cls(db, row)
        with db.reader() as conn:
            holder = conn.execute(
                sa.select(TABLE.c.uuid, TABLE.c.reservation)
                .where(_ident_clause(ident))).first()
        if holder is None:
            raise exception.NodeNotFound(node=ident)
        raise exception.NodeLocked(node=holder.uuid, host=holder.reservation)

    @staticmethod
    def release(db: db_api.Database, host: str, node_id: int,
                changes: Mapping[str, Any] | None = None,
                history: Sequence[Mapping[str, Any]] = ()) -> bool:
        """Drop ``host``'s lock on a node, writing ``changes`` in the same
        UPDATE, and the ``history`` entries of those changes
        (:meth:`history`) in the same transaction.

        Returns False when the lock was no longer held by ``host`` (another
        conductor cleared it after deciding this one was dead); the changes
        are then not written.
        """
        values = dict(changes or {}, reservation=None, b_id=node_id,
                      b_host=host)
        if 'provision_state' in values:
            # Callback timeouts count from here: the state's start.
            values['provision_updated_at'] = base.utcnow()
        with db.writer() as conn:
            held = conn.execute(_UPDATE_IF_HELD, values).rowcount == 1
            if held:
                placement_queue.nodes_changed(db, [node_id], values)
                event_obj.add(db, history)
        return held

    @staticmethod
    def write_if_held(db: db_api.Database, host: str, node_id: int,
                      changes: Mapping[str, Any],
                      history: Sequence[Mapping[str, Any]] = ()) -> bool:
        """Write ``changes`` while ``host`` still holds the lock; keep it.

        For the changes of a task whose release failed: once written, the
        lock is cleared like any lock left behind (see
        :mod:`ferrum.conductor.outage`). False when the lock was lost.
        """
        if not changes:
            return True
        values = dict(changes, b_id=node_id, b_host=host)
        with db.writer() as conn:
            held = conn.execute(_UPDATE_IF_HELD, values).rowcount == 1
            if held:
                placement_queue.nodes_changed(db, [node_id], changes)
                event_obj.add(db, history)
        return held


def uuids_of(db: db_api.Database, idents: Iterable[str]) -> dict[str, str]:
    """UUIDs of the nodes named by UUIDs or names, in one query.

    :returns: identifier -> node UUID, for the identifiers that name a node.
    """
    wanted = set(idents)
    uuids = {i.lower() for i in wanted if base.is_uuid_like(i)}
    names = {i for i in wanted if not base.is_uuid_like(i)}
    idents = base.bucketed(sorted(uuids | names))
    with db.reader() as conn:
        rows = conn.execute(sa.select(TABLE.c.uuid, TABLE.c.name).where(
            # One list for both columns: a name never looks like a UUID,
            # so neither side matches the other's values, and there is one
            # bucketed list length instead of two.
            sa.or_(TABLE.c.uuid.in_(idents), TABLE.c.name.in_(idents)))).all()
    by_ident = {row.uuid: row.uuid for row in rows}
    by_ident.update((row.name, row.uuid) for row in rows if row.name)
    result = {}
    for ident in wanted:
        key = ident.lower() if base.is_uuid_like(ident) else ident
        if key in by_ident:
            result[ident] = by_ident[key]
    return result


def _ident_clause(ident: int | str) -> sa.ColumnElement[bool]:
    column, value = base.ident_column(ident)
    return TABLE.c[column] == value


def _filtered(query: sa.Select[Any],
              filters: Mapping[str, Any]) -> sa.Select[Any]:
    for key, value in filters.items():
        if key in EQUALITY_FILTERS:
            query = query.where(TABLE.c[key] == value if value is not None
                                else TABLE.c[key].is_(None))
        elif key == 'provision_state_in':
            query = query.where(TABLE.c.provision_state.in_(list(value)))
        elif key == 'uuid_in':
            query = query.where(TABLE.c.uuid.in_(list(value)))
        elif key == 'id_in':
            query = query.where(TABLE.c.id.in_(list(value)))
        elif key == 'shard_in':
            query = query.where(TABLE.c.shard.in_(list(value)))
        elif key == 'sharded':
            column = TABLE.c.shard
            query = query.where(column.isnot(None) if value
                                else column.is_(None))
        elif key == 'associated':
            column = TABLE.c.instance_uuid
            query = query.where(column.isnot(None) if value
                                else column.is_(None))
        elif key == 'reserved':
            column = TABLE.c.reservation
            query = query.where(column.isnot(None) if value
                                else column.is_(None))
        elif key == 'project':
            # Ironic's project filter: the project owns or leases the node.
            query = query.where(sa.or_(TABLE.c.owner == value,
                                       TABLE.c.lessee == value))
        elif key == 'description_contains':
            query = query.where(TABLE.c.description.contains(
                value, autoescape=True))
        elif key == 'reservation_in':
            query = query.where(TABLE.c.reservation.in_(list(value)))
        else:
            raise exception.InvalidParameterValue(
                reason='Unknown node filter %s' % key)
    return query
