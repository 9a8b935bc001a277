# SPDX-License-Identifier: Apache-2.0
"""Port: one network interface (MAC address) of a node.

A :class:`Port` is a plain object loaded from one row of ``ports`` joined
with its node and its group, so it also carries the node's UUID
(``node_uuid``) and the group's (``portgroup_uuid``, or None), which are
what the API shows; ``node_id`` and ``portgroup_id`` are what is stored.
``save()`` writes back only the fields that changed since the port was
loaded.

The database guarantees that a MAC address belongs to one port, and a
name too (unique constraints): a duplicate is reported as
:class:`MACAlreadyExists` or :class:`PortDuplicateName` naming the value,
whichever process inserted it first. Likewise the foreign key
decides whether the node is still there: a port written for a node deleted
after the caller looked it up is :class:`NodeNotFound`.
"""

from __future__ import annotations

import copy
import datetime
import re
import uuid as uuidlib
from collections.abc import Collection, Mapping, Sequence
from typing import Any

import sqlalchemy as sa
from oslo_db import exception as db_exc

from ferrum.common import exception
from ferrum.db import api as db_api
from ferrum.db import models
from ferrum.objects import base

TABLE = models.table(models.Port)
_NODES = models.table(models.Node)
_GROUPS = models.table(models.Portgroup)
FIELDS: tuple[str, ...] = tuple(c.name for c in TABLE.columns)
_JSON_FIELDS = frozenset({'local_link_connection', 'extra', 'internal_info'})

_SELECT = sa.select(
    TABLE, _NODES.c.uuid.label('node_uuid'),
    _GROUPS.c.uuid.label('portgroup_uuid')).join(
    _NODES, _NODES.c.id == TABLE.c.node_id).outerjoin(
    _GROUPS, _GROUPS.c.id == TABLE.c.portgroup_id)
_INSERT = sa.insert(TABLE).returning(TABLE.c.id)
#: A port's address as Ironic stores it: six pairs of hexadecimal digits
#: separated by colons, in lower case (the only form Ironic accepts).
MAC = re.compile('^[0-9a-f]{2}(:[0-9a-f]{2}){5}$')
#: What a new port has unless told otherwise.
_DEFAULTS: dict[str, Any] = {
    'pxe_enabled': True, 'is_smartnic': False, 'local_link_connection': {},
    'extra': {}, 'internal_info': {}, 'available_for_dynamic_portgroup': True}


def normalize_mac(address: str) -> str:
    """``address`` in lower case, as ports store it.

    :raises InvalidMAC: it is not six colon-separated pairs of hex digits.
    """
    normalized = address.lower()
    if not MAC.match(normalized):
        raise exception.InvalidMAC(mac=address[:100])
    return normalized


class Port(base.Row):
    """One port row. Attribute names are the column names, plus node_uuid."""

    COLUMNS = FIELDS
    JSON_COLUMNS = _JSON_FIELDS
    DICT_COLUMNS = _JSON_FIELDS

    id: int
    uuid: str
    name: str | None
    address: str
    node_id: int
    #: The UUID of the node ``node_id`` names; set it with ``node_id``.
    node_uuid: str
    local_link_connection: dict[str, Any]
    pxe_enabled: bool
    physical_network: str | None
    is_smartnic: bool
    #: The group the port is in, if any; set it with ``portgroup_id``.
    portgroup_id: int | None
    portgroup_uuid: str | None
    description: str | None
    vendor: str | None
    category: str | None
    available_for_dynamic_portgroup: bool
    extra: dict[str, Any]
    #: What ferrum records on the port: ``tenant_vif_port_id``, the VIF
    #: attached to it (see ferrum.drivers.vifs).
    internal_info: dict[str, Any]
    created_at: datetime.datetime
    updated_at: datetime.datetime | None

    def __repr__(self) -> str:
        return '<Port %s %s>' % (self.uuid, self.address)

    # ---- reading ----------------------------------------------------------

    @classmethod
    def get(cls, db: db_api.Database, uuid: str) -> Port:
        """Load a port by UUID.

        :raises PortNotFound: when no port has that UUID.
        """
        try:
            canonical = str(uuidlib.UUID(uuid))
        except ValueError:
            raise exception.PortNotFound(port=uuid) from None
        return cls._get(db, TABLE.c.uuid == canonical, uuid)

    @classmethod
    def get_by_name(cls, db: db_api.Database, name: str) -> Port:
        """:raises PortNotFound: when no port has that name."""
        return cls._get(db, TABLE.c.name == name, name)

    @classmethod
    def _get(cls, db: db_api.Database, where: sa.ColumnElement[bool],
             ident: str) -> Port:
        with db.reader() as conn:
            row = conn.execute(_SELECT.where(where)).mappings().first()
        if row is None:
            raise exception.PortNotFound(port=ident)
        return cls(db, row)

    @classmethod
    def list(cls, db: db_api.Database, *, node_id: int | None = None,
             address: str | None = None, portgroup_id: int | None = None,
             description_contains: str | None = None,
             conductor_groups: Collection[str] | None = None,
             limit: int | None = None,
             sort_key: str = 'id', sort_dir: str = 'asc',
             marker: Port | None = None,
             project: str | None = None,
             shards: Sequence[str] | None = None) -> list[Port]:
        """Ports, filtered by what is given: a node, an address, a group,
        a part of the description, the nodes' conductor groups.

        ``marker`` is the last port of the previous page; ``project`` keeps
        the ports of nodes that project owns or leases; ``shards``, those
        of nodes in one of these shards.
        """
        query = _SELECT
        if portgroup_id is not None:
            query = query.where(TABLE.c.portgroup_id == portgroup_id)
        if description_contains is not None:
            query = query.where(TABLE.c.description.contains(
                description_contains, autoescape=True))
        if conductor_groups is not None:
            query = query.where(_NODES.c.conductor_group.in_(
                base.bucketed(sorted(conductor_groups))))
        if shards is not None:
            query = query.where(_NODES.c.shard.in_(list(shards)))
        if project is not None:
            query = query.where(sa.or_(_NODES.c.owner == project,
                                       _NODES.c.lessee == project))
        if node_id is not None:
            query = query.where(TABLE.c.node_id == node_id)
        if address is not None:
            query = query.where(TABLE.c.address == address)
        query = base.paginate(query, TABLE, limit, sort_key, sort_dir, marker)
        with db.reader() as conn:
            return [cls(db, row) for row in conn.execute(query).mappings()]

    @classmethod
    def unsaved(cls, values: Mapping[str, Any]) -> Port:
        """A port about to be created from ``values``, with the defaults
        :meth:`create` gives, for checks before the insert."""
        row: dict[str, Any] = dict.fromkeys(FIELDS)
        row.update(copy.deepcopy(_DEFAULTS), uuid='', portgroup_uuid=None,
                   node_uuid='')
        row.update(values)
        return cls(None, row)

    # ---- writing ----------------------------------------------------------

    @classmethod
    def create(cls, db: db_api.Database, values: Mapping[str, Any]) -> Port:
        """Insert a port; ``uuid`` is generated unless given.

        :raises MACAlreadyExists: another port has the same address.
        :raises PortAlreadyExists: another port has the same UUID.
        :raises NodeNotFound: the node was deleted.
        """
        row: dict[str, Any] = dict(copy.deepcopy(_DEFAULTS),
                                   uuid=base.new_uuid(),
                                   created_at=base.utcnow())
        row.update(values)
        base.check_columns(row, FIELDS, 'port')
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
        """Write the changed fields to the database and stamp updated_at.

        :raises MACAlreadyExists: the new address belongs to another port.
        :raises PortNotFound: the port was deleted meanwhile.
        :raises NodeNotFound: the node it moves to was deleted.
        """
        gone = exception.PortNotFound(port=self.uuid)
        try:
            self._write_changes(TABLE, self.id, gone)
        except db_exc.DBDuplicateEntry as exc:
            raise _duplicate(exc, {'address': self.address,
                                   'name': self.name}) from exc
        except db_exc.DBReferenceError as exc:
            raise exception.NodeNotFound(node=self.node_id) from exc

    def destroy(self) -> None:
        """Delete the port.

        :raises PortNotFound: it was already deleted.
        """
        self._delete_row(TABLE, self.id,
                         exception.PortNotFound(port=self.uuid))


def _duplicate(exc: db_exc.DBDuplicateEntry,
               values: Mapping[str, Any]) -> exception.Conflict:
    """The conflict a unique-constraint violation stands for."""
    columns = exc.columns or ()
    if 'uuid' in columns or 'uniq_ports0uuid' in columns:
        return exception.PortAlreadyExists(uuid=values.get('uuid'))
    if 'name' in columns or 'uniq_ports0name' in columns:
        return exception.PortDuplicateName(name=values.get('name'))
    return exception.MACAlreadyExists(mac=values.get('address'))
