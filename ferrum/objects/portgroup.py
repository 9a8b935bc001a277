# SPDX-License-Identifier: Apache-2.0
"""Port group: a bond of a node's ports (Ironic's portgroup, API 1.23).

A :class:`Portgroup` is loaded from one row of ``portgroups`` joined with
its node, so it carries the node's UUID (``node_uuid``) as ports do.

A group's ``physical_network`` is its ports': changing it changes theirs.
The database keeps the rules that two writers could break between a check
and a write: UUID, name and MAC address are unique among groups (each
refusal names the value), and a group that still has ports cannot be
deleted, because ``ports.portgroup_id`` references it without ON DELETE.
Deleting a node takes its groups with it.
"""

from __future__ import annotations

import datetime
from collections.abc import Collection, Mapping
from typing import Any

import sqlalchemy as sa
from oslo_db import exception as db_exc

from ferrum.common import exception
from ferrum.db import api as db_api
from ferrum.db import models
from ferrum.objects import base

TABLE = models.table(models.Portgroup)
_NODES = models.table(models.Node)
_PORTS = models.table(models.Port)
FIELDS: tuple[str, ...] = tuple(c.name for c in TABLE.columns)
_JSON_FIELDS = frozenset({'extra', 'internal_info', 'properties'})

_SELECT = sa.select(TABLE, _NODES.c.uuid.label('node_uuid')).join(
    _NODES, _NODES.c.id == TABLE.c.node_id)
_INSERT = sa.insert(TABLE).returning(TABLE.c.id)
_UPDATE = sa.update(TABLE).where(TABLE.c.id == sa.bindparam('b_id'))
_HAS_PORTS = sa.select(sa.literal(1)).where(
    _PORTS.c.portgroup_id == sa.bindparam('b_id')).limit(1)


def _select(columns: Collection[str]) -> sa.Select[Any]:
    """:data:`_SELECT` narrowed to ``columns`` (and id, uuid)."""
    wanted = {'id', 'uuid', *columns}
    selected: list[Any] = [c for c in TABLE.columns if c.name in wanted]
    if 'node_uuid' in wanted:
        selected.append(_NODES.c.uuid.label('node_uuid'))
    return sa.select(*selected).select_from(TABLE.join(
        _NODES, _NODES.c.id == TABLE.c.node_id))


class Portgroup(base.Row):
    """One portgroups row. Attribute names are the column names, plus
    node_uuid."""

    COLUMNS = FIELDS
    JSON_COLUMNS = _JSON_FIELDS
    DICT_COLUMNS = _JSON_FIELDS

    id: int
    uuid: str
    name: str | None
    node_id: int
    #: The UUID of the node ``node_id`` names; set it with ``node_id``.
    node_uuid: str
    address: str | None
    extra: dict[str, Any]
    internal_info: dict[str, Any]
    standalone_ports_supported: bool
    mode: str | None
    properties: dict[str, Any]
    physical_network: str | None
    category: str | None
    dynamic_portgroup: bool | None
    created_at: datetime.datetime
    updated_at: datetime.datetime | None

    def __repr__(self) -> str:
        return '<Portgroup %s %s>' % (self.uuid, self.name)

    # ---- reading ----------------------------------------------------------

    @classmethod
    def get(cls, db: db_api.Database, ident: int | str) -> Portgroup:
        """Load a group by id, UUID or name.

        :raises PortgroupNotFound: no group has it.
        """
        column, value = base.ident_column(ident)
        with db.reader() as conn:
            row = conn.execute(_SELECT.where(
                TABLE.c[column] == value)).mappings().first()
        if row is None:
            raise exception.PortgroupNotFound(portgroup=ident)
        return cls(db, row)

    @classmethod
    def list(cls, db: db_api.Database, *, node_id: int | None = None,
             address: str | None = None,
             conductor_groups: Collection[str] | None = None,
             shards: Collection[str] | None = None,
             limit: int | None = None, sort_key: str = 'id',
             sort_dir: str = 'asc', marker: Portgroup | None = None,
             project: str | None = None,
             columns: Collection[str] | None = None) -> list[Portgroup]:
        """Groups, filtered by what is given.

        ``marker`` is the last group of the previous page; ``project``
        keeps the groups of nodes that project owns or leases;
        ``conductor_groups`` those of nodes in one of these groups,
        ``shards`` those of nodes in one of these shards.
        ``columns`` loads only those (with ``id`` and ``uuid``), for a
        list that shows a few fields: decoding the JSON columns of a
        thousand rows costs more than the query. Such groups are for
        reading, not for :meth:`save`.
        """
        query = _SELECT if columns is None else _select(columns)
        if project is not None:
            query = query.where(sa.or_(_NODES.c.owner == project,
                                       _NODES.c.lessee == project))
        if node_id is not None:
            query = query.where(TABLE.c.node_id == node_id)
        if address is not None:
            query = query.where(TABLE.c.address == address)
        if conductor_groups is not None:
            query = query.where(_NODES.c.conductor_group.in_(
                base.bucketed(sorted(conductor_groups))))
        if shards is not None:
            query = query.where(_NODES.c.shard.in_(
                base.bucketed(sorted(shards))))
        query = base.paginate(query, TABLE, limit, sort_key, sort_dir, marker)
        with db.reader() as conn:
            result = conn.execute(query)
            # Keys once, not a mapping view per row (a quarter of a page's
            # time at a thousand rows).
            keys = list(result.keys())
            return [cls(db, dict(zip(keys, row, strict=True)))
                    for row in result]

    def has_ports(self) -> bool:
        with self._db.reader() as conn:
            return conn.execute(_HAS_PORTS, {'b_id': self.id}).first() \
                is not None

    # ---- writing ----------------------------------------------------------

    @classmethod
    def create(cls, db: db_api.Database,
               values: Mapping[str, Any]) -> Portgroup:
        """Insert a group; ``uuid`` is generated unless given.

        :raises PortgroupAlreadyExists: the UUID is taken.
        :raises PortgroupDuplicateName: the name is taken.
        :raises PortgroupMACAlreadyExists: another group has the address.
        :raises NodeNotFound: the node was deleted.
        """
        row: dict[str, Any] = {
            'uuid': base.new_uuid(), 'standalone_ports_supported': True,
            'extra': {}, 'internal_info': {}, 'properties': {},
            'dynamic_portgroup': False, 'created_at': base.utcnow()}
        row.update(values)
        base.check_columns(row, FIELDS, 'port group')
        try:
            with db.writer() as conn:
                new_id = conn.execute(_INSERT, row).scalar_one()
                created = conn.execute(_SELECT.where(
                    TABLE.c.id == new_id)).mappings().one()
        except db_exc.DBDuplicateEntry as exc:
            raise _duplicate(exc, row) from exc
        except db_exc.DBReferenceError as exc:
            raise exception.NodeNotFound(node=row.get('node_id')) from exc
        return cls(db, created)

    def save(self) -> None:
        """Write the changed fields and stamp updated_at; a new
        ``physical_network`` is given to the group's ports too.

        :raises PortgroupDuplicateName: the new name is taken.
        :raises PortgroupMACAlreadyExists: the new address is taken.
        :raises PortgroupNotFound: the group was deleted meanwhile.
        :raises NodeNotFound: the node it moves to was deleted.
        """
        changes = self.changes()
        if not changes:
            return
        changes['updated_at'] = base.utcnow()
        try:
            with self._db.writer() as conn:
                result = conn.execute(_UPDATE, dict(changes, b_id=self.id))
                if 'physical_network' in changes:
                    # A group's physical network is its ports' (Ironic's
                    # update_physical_network), in the same transaction.
                    conn.execute(sa.update(_PORTS).where(
                        _PORTS.c.portgroup_id == self.id).values(
                        physical_network=changes['physical_network'],
                        updated_at=changes['updated_at']))
        except db_exc.DBDuplicateEntry as exc:
            raise _duplicate(exc, changes) from exc
        except db_exc.DBReferenceError as exc:
            raise exception.NodeNotFound(node=changes.get('node_id')) from exc
        if result.rowcount != 1:
            raise exception.PortgroupNotFound(portgroup=self.uuid)
        self._mark_saved(changes)

    def destroy(self) -> None:
        """Delete the group, which must have no ports.

        :raises PortgroupNotEmpty: a port is still in it (the foreign key
            decides, so a port that joined since a check counts too).
        :raises PortgroupNotFound: it was already deleted.
        """
        try:
            with self._db.writer() as conn:
                if conn.execute(_HAS_PORTS, {'b_id': self.id}).first():
                    raise exception.PortgroupNotEmpty(portgroup=self.uuid)
                result = conn.execute(
                    sa.delete(TABLE).where(TABLE.c.id == self.id))
        except db_exc.DBReferenceError as exc:
            raise exception.PortgroupNotEmpty(portgroup=self.uuid) from exc
        if result.rowcount != 1:
            raise exception.PortgroupNotFound(portgroup=self.uuid)


def _duplicate(exc: db_exc.DBDuplicateEntry,
               values: Mapping[str, Any]) -> exception.Conflict:
    """The conflict a unique-constraint violation stands for."""
    columns = exc.columns or ()
    if 'name' in columns or 'uniq_portgroups0name' in columns:
        return exception.PortgroupDuplicateName(name=values.get('name'))
    if 'address' in columns or 'uniq_portgroups0address' in columns:
        return exception.PortgroupMACAlreadyExists(mac=values.get('address'))
    return exception.PortgroupAlreadyExists(uuid=values.get('uuid'))
