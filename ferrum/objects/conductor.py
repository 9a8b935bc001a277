# SPDX-License-Identifier: Apache-2.0
"""Conductor registrations: who is alive, and which drivers each one runs.

A conductor is alive while it is marked online and its ``heartbeat_at`` is
younger than ``[conductor]heartbeat_timeout``; the API routes by these rows
and other conductors take over the work of the dead ones.
"""

import dataclasses
import datetime
import logging
from collections.abc import Iterable, Mapping
from typing import Any

import sqlalchemy as sa
from sqlalchemy.dialects import mysql
from sqlalchemy.dialects import postgresql
from sqlalchemy.dialects import sqlite

from ferrum.common import exception
from ferrum.db import api as db_api
from ferrum.db import models
from ferrum.objects import base

LOG = logging.getLogger(__name__)
TABLE = models.table(models.Conductor)
IFACES = models.table(models.ConductorHardwareInterface)


@dataclasses.dataclass(frozen=True)
class Conductor:
    id: int
    hostname: str
    conductor_group: str
    online: bool
    heartbeat_at: datetime.datetime
    rpc_address: str | None
    created_at: datetime.datetime | None = None


@dataclasses.dataclass(frozen=True)
class HardwareInterface:
    """One interface a conductor enabled for one of its hardware types."""

    hardware_type: str
    interface_type: str
    interface_name: str
    default: bool
    #: driver_info key -> description, from the interface's get_properties().
    #: Left out of the hash (a dict has none) so rows stay usable in sets.
    properties: Mapping[str, str] = dataclasses.field(default_factory=dict,
                                                      hash=False)
    #: driver_info keys whose values are never shown or logged.
    secret_properties: frozenset[str] = frozenset()


@dataclasses.dataclass(frozen=True)
class ActiveHardwareType:
    """A hardware type as the live conductors that run it registered it."""

    name: str
    #: Hostnames of the live conductors that run it, sorted.
    hosts: tuple[str, ...]
    #: kind -> enabled interface names, in the hardware type's preference
    #: order (the union over its conductors).
    enabled: Mapping[str, tuple[str, ...]]
    #: kind -> default interface name.
    defaults: Mapping[str, str]
    #: driver_info key -> description, over the default interfaces.
    properties: Mapping[str, str]


def _cutoff(timeout: int) -> datetime.datetime:
    return base.utcnow() - datetime.timedelta(seconds=timeout)


def alive(heartbeat_timeout: int) -> sa.ColumnElement[bool]:
    """The SQL twin of :func:`is_alive`."""
    return sa.and_(TABLE.c.online.is_(True),
                   TABLE.c.heartbeat_at > _cutoff(heartbeat_timeout))


def _upsert(dialect: str, values: dict[str, Any]) -> sa.Executable:
    """One statement that inserts the registration, or updates the row
    of its hostname: the database decides, so two registrations of one
    hostname at once both succeed (the later one's values win)."""
    changed = {name: value for name, value in values.items()
               if name not in ('hostname', 'created_at')}
    if dialect == 'mysql':
        mysql_insert = mysql.insert(TABLE).values(**values)
        return mysql_insert.on_duplicate_key_update(**changed)
    insert = (postgresql.insert(TABLE) if dialect == 'postgresql'
              else sqlite.insert(TABLE)).values(**values)
    return insert.on_conflict_do_update(index_elements=['hostname'],
                                        set_=changed)


def register(db: db_api.Database, hostname: str, group: str,
             heartbeat_timeout: int, rpc_address: str | None = None
             ) -> Conductor:
    """Register (or re-register after a restart) a conductor as online,
    with one insert-or-update of its hostname's row.

    A restart under systemd comes back before the old heartbeat expires, so
    a live-looking row of the same hostname is taken over with a warning
    rather than refused. That warning alone reads the row first: the
    write does not depend on what it read.
    """
    now = base.utcnow()
    values = {'hostname': hostname, 'conductor_group': group,
              'online': True, 'heartbeat_at': now,
              'rpc_address': rpc_address, 'created_at': now,
              'updated_at': now}
    with db.writer() as conn:
        if conn.execute(sa.select(TABLE.c.id).where(
                TABLE.c.hostname == hostname,
                alive(heartbeat_timeout))).first() is not None:
            LOG.warning('Conductor %s was still registered as alive; '
                        'assuming it restarted. Two conductors must not '
                        'share one [DEFAULT]host.', hostname)
        conn.execute(_upsert(conn.dialect.name, values))
    return get(db, hostname)


def get(db: db_api.Database, hostname: str) -> Conductor:
    with db.reader() as conn:
        row = conn.execute(sa.select(TABLE).where(
            TABLE.c.hostname == hostname)).mappings().first()
    if row is None:
        raise exception.ConductorNotFound(conductor=hostname)
    return _conductor(row)


def _conductor(row: sa.RowMapping) -> Conductor:
    return Conductor(**{f.name: row[f.name]
                        for f in dataclasses.fields(Conductor)})


def heartbeat(db: db_api.Database, conductor_id: int,
              online: bool = True) -> None:
    """Record that the conductor is running.

    :param online: False while it stops: it is out of the hash ring but
        still finishing its work, so not dead (see :func:`list_silent`).
    """
    now = base.utcnow()
    with db.writer() as conn:
        conn.execute(sa.update(TABLE).where(TABLE.c.id == conductor_id)
                     .values(heartbeat_at=now, online=online))


def unregister(db: db_api.Database, conductor_id: int) -> None:
    """Mark the conductor offline; its row stays for the API's history."""
    with db.writer() as conn:
        conn.execute(sa.update(TABLE).where(TABLE.c.id == conductor_id)
                     .values(online=False, updated_at=base.utcnow()))


def list_all(db: db_api.Database) -> list[Conductor]:
    with db.reader() as conn:
        rows = conn.execute(sa.select(TABLE).order_by(TABLE.c.hostname))
        return [_conductor(row) for row in rows.mappings()]


def is_alive(conductor: Conductor, heartbeat_timeout: int) -> bool:
    return conductor.online and conductor.heartbeat_at > _cutoff(
        heartbeat_timeout)


def list_dead(db: db_api.Database, heartbeat_timeout: int) -> list[Conductor]:
    """Conductors that stopped (offline) or whose heartbeat is too old."""
    return [c for c in list_all(db) if not is_alive(c, heartbeat_timeout)]


def list_silent(db: db_api.Database, heartbeat_timeout: int
                ) -> list[Conductor]:
    """Conductors whose heartbeat is too old, online or not.

    Unlike :func:`list_dead`, a conductor that is stopping gracefully
    (offline, still beating while it finishes its work) is not among them:
    its node locks are its own until it releases them.
    """
    cutoff = _cutoff(heartbeat_timeout)
    return [c for c in list_all(db) if c.heartbeat_at <= cutoff]


def set_hardware_interfaces(db: db_api.Database, conductor_id: int,
                            interfaces: Iterable[HardwareInterface]) -> None:
    """Replace the drivers a conductor advertises to the API.

    Rows are inserted in the order given, which :func:`active_hardware_types`
    keeps as the preference order of the enabled interfaces.
    """
    now = base.utcnow()
    rows = [{'conductor_id': conductor_id, 'created_at': now,
             'hardware_type': i.hardware_type,
             'interface_type': i.interface_type,
             'interface_name': i.interface_name, 'default': i.default,
             'properties': dict(i.properties),
             'secret_properties': sorted(i.secret_properties)}
            for i in interfaces]
    with db.writer() as conn:
        conn.execute(sa.delete(IFACES).where(
            IFACES.c.conductor_id == conductor_id))
        if rows:
            conn.execute(sa.insert(IFACES), rows)


def _interface(row: sa.RowMapping) -> HardwareInterface:
    return HardwareInterface(
        hardware_type=row['hardware_type'],
        interface_type=row['interface_type'],
        interface_name=row['interface_name'], default=row['default'],
        properties=row['properties'] or {},
        secret_properties=frozenset(row['secret_properties'] or ()))


def list_hardware_interfaces(db: db_api.Database, conductor_id: int
                             ) -> list[HardwareInterface]:
    with db.reader() as conn:
        rows = conn.execute(sa.select(IFACES).where(
            IFACES.c.conductor_id == conductor_id).order_by(IFACES.c.id))
        return [_interface(row) for row in rows.mappings()]


def alive_drivers(db: db_api.Database, heartbeat_timeout: int
                  ) -> dict[str, tuple[str, frozenset[str]]]:
    """hostname -> (conductor group, hardware types), live conductors only.

    What routing a node to a conductor needs, in one query.
    """
    query = (sa.select(TABLE.c.hostname, TABLE.c.conductor_group,
                       IFACES.c.hardware_type).distinct()
             .select_from(TABLE.outerjoin(
                 IFACES, IFACES.c.conductor_id == TABLE.c.id))
             .where(alive(heartbeat_timeout)))
    found: dict[str, tuple[str, set[str]]] = {}
    with db.reader() as conn:
        for hostname, group, hw_type in conn.execute(query):
            types = found.setdefault(hostname, (group, set()))[1]
            if hw_type is not None:
                types.add(hw_type)
    return {host: (group, frozenset(types))
            for host, (group, types) in found.items()}


def secret_keys(db: db_api.Database
                ) -> dict[tuple[str, str, str], frozenset[str]]:
    """(hardware type, kind, interface name) -> declared secret keys.

    The union over every registration, live or not: a node keeps its
    secrets hidden while the conductors of its driver are down. Every
    registered interface is present, with an empty set when it declares
    nothing, so a caller can tell "no secrets" from "not registered yet".
    """
    query = sa.select(IFACES.c.hardware_type, IFACES.c.interface_type,
                      IFACES.c.interface_name, IFACES.c.secret_properties)
    found: dict[tuple[str, str, str], set[str]] = {}
    with db.reader() as conn:
        for hw_type, kind, name, secrets in conn.execute(query):
            found.setdefault((hw_type, kind, name), set()).update(
                secrets or ())
    return {key: frozenset(keys) for key, keys in found.items()}


def active_hardware_types(db: db_api.Database, heartbeat_timeout: int,
                          name: str | None = None
                          ) -> list[ActiveHardwareType]:
    """The hardware types live conductors run (only ``name`` if given).

    One query. Conductors of one deployment normally agree on defaults;
    when they do not, the first live conductor by hostname decides, so
    the answer does not change from one request to the next.
    """
    query = (sa.select(TABLE.c.hostname, IFACES)
             .join(IFACES, IFACES.c.conductor_id == TABLE.c.id)
             .where(alive(heartbeat_timeout))
             .order_by(IFACES.c.hardware_type, TABLE.c.hostname,
                       IFACES.c.id))
    if name is not None:
        query = query.where(IFACES.c.hardware_type == name)
    by_type: dict[str, list[tuple[str, HardwareInterface]]] = {}
    with db.reader() as conn:
        for row in conn.execute(query).mappings():
            by_type.setdefault(row['hardware_type'], []).append(
                (row['hostname'], _interface(row)))
    return [_summarize(hw_type, rows) for hw_type, rows in by_type.items()]


def _summarize(name: str, rows: list[tuple[str, HardwareInterface]]
               ) -> ActiveHardwareType:
    enabled: dict[str, list[str]] = {}
    defaults: dict[str, str] = {}
    for _host, iface in rows:
        names = enabled.setdefault(iface.interface_type, [])
        if iface.interface_name not in names:
            names.append(iface.interface_name)
        if iface.default:
            defaults.setdefault(iface.interface_type, iface.interface_name)
    properties: dict[str, str] = {}
    for _host, iface in rows:
        if defaults.get(iface.interface_type) == iface.interface_name:
            for key, description in iface.properties.items():
                properties.setdefault(key, description)
    return ActiveHardwareType(
        name=name, hosts=tuple(sorted({host for host, _iface in rows})),
        enabled={kind: tuple(names) for kind, names in enabled.items()},
        defaults=defaults, properties=properties)


def list_page(db: db_api.Database, limit: int | None, sort_key: str,
              sort_dir: str, marker: Conductor | None = None
              ) -> list[Conductor]:
    """One page of conductors, live or not, sorted by a column."""
    query = base.paginate(sa.select(TABLE), TABLE, limit, sort_key,
                          sort_dir, marker)
    with db.reader() as conn:
        return [_conductor(row) for row in conn.execute(query).mappings()]


def hardware_types_of(db: db_api.Database, conductor_ids: Iterable[int]
                      ) -> dict[int, list[str]]:
    """conductor id -> the hardware types it registered, sorted."""
    query = (sa.select(IFACES.c.conductor_id, IFACES.c.hardware_type)
             .distinct()
             .where(IFACES.c.conductor_id.in_(list(conductor_ids)))
             .order_by(IFACES.c.hardware_type))
    found: dict[int, list[str]] = {}
    with db.reader() as conn:
        for conductor_id, hw_type in conn.execute(query):
            found.setdefault(conductor_id, []).append(hw_type)
    return found
