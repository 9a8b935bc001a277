# SPDX-License-Identifier: Apache-2.0
"""Conductor registrations: who is alive, and which drivers each one runs.

A conductor is alive while it is marked online and its ``heartbeat_at`` is
younger than ``[conductor]heartbeat_timeout``; the API routes by these rows
and other conductors take over the work of the dead ones.
"""

import dataclasses
import datetime
import logging
from collections.abc import Iterable

import sqlalchemy as sa

from ferrum.common import exception
from ferrum.db import api as db_api
from ferrum.db import models
from ferrum.objects import base

LOG = logging.getLogger(__name__)
TABLE: sa.Table = models.Conductor.__table__  # type: ignore[assignment]
IFACES: sa.Table = models.ConductorHardwareInterface.__table__  # type: ignore[assignment]


@dataclasses.dataclass(frozen=True)
class Conductor:
    id: int
    hostname: str
    conductor_group: str
    online: bool
    heartbeat_at: datetime.datetime
    rpc_address: str | None


@dataclasses.dataclass(frozen=True)
class HardwareInterface:
    hardware_type: str
    interface_type: str
    interface_name: str
    default: bool


def _cutoff(timeout: int) -> datetime.datetime:
    return base.utcnow() - datetime.timedelta(seconds=timeout)


def register(db: db_api.Database, hostname: str, group: str,
             heartbeat_timeout: int, rpc_address: str | None = None
             ) -> Conductor:
    """Register (or re-register after a restart) a conductor as online.

    A restart under systemd comes back before the old heartbeat expires, so
    a live-looking row of the same hostname is taken over with a warning
    rather than refused.
    """
    now = base.utcnow()
    values = {'conductor_group': group, 'online': True, 'heartbeat_at': now,
              'rpc_address': rpc_address, 'updated_at': now}
    with db.writer() as conn:
        row = conn.execute(sa.select(TABLE).where(
            TABLE.c.hostname == hostname)).mappings().first()
        if row is None:
            conn.execute(sa.insert(TABLE).values(
                hostname=hostname, created_at=now, **values))
        else:
            if row['online'] and row['heartbeat_at'] > _cutoff(
                    heartbeat_timeout):
                LOG.warning('Conductor %s was still registered as alive; '
                            'assuming it restarted. Two conductors must not '
                            'share one [DEFAULT]host.', hostname)
            conn.execute(sa.update(TABLE).where(TABLE.c.id == row['id'])
                         .values(**values))
    return get(db, hostname)


def get(db: db_api.Database, hostname: str) -> Conductor:
    with db.reader() as conn:
        row = conn.execute(sa.select(TABLE).where(
            TABLE.c.hostname == hostname)).mappings().first()
    if row is None:
        raise exception.ConductorNotFound(conductor=hostname)
    return Conductor(**{f.name: row[f.name]
                        for f in dataclasses.fields(Conductor)})


def heartbeat(db: db_api.Database, conductor_id: int) -> None:
    """Record that the conductor is alive (and online again if it was not)."""
    now = base.utcnow()
    with db.writer() as conn:
        conn.execute(sa.update(TABLE).where(TABLE.c.id == conductor_id)
                     .values(heartbeat_at=now, online=True))


def unregister(db: db_api.Database, conductor_id: int) -> None:
    """Mark the conductor offline; its row stays for the API's history."""
    with db.writer() as conn:
        conn.execute(sa.update(TABLE).where(TABLE.c.id == conductor_id)
                     .values(online=False, updated_at=base.utcnow()))


def list_all(db: db_api.Database) -> list[Conductor]:
    with db.reader() as conn:
        rows = conn.execute(sa.select(TABLE).order_by(TABLE.c.hostname))
        return [Conductor(**{f.name: row._mapping[f.name]
                             for f in dataclasses.fields(Conductor)})
                for row in rows]


def is_alive(conductor: Conductor, heartbeat_timeout: int) -> bool:
    return conductor.online and conductor.heartbeat_at > _cutoff(
        heartbeat_timeout)


def list_dead(db: db_api.Database, heartbeat_timeout: int) -> list[Conductor]:
    """Conductors that stopped (offline) or whose heartbeat is too old."""
    return [c for c in list_all(db) if not is_alive(c, heartbeat_timeout)]


def set_hardware_interfaces(db: db_api.Database, conductor_id: int,
                            interfaces: Iterable[HardwareInterface]) -> None:
    """Replace the drivers a conductor advertises to the API."""
    now = base.utcnow()
    rows = [dict(dataclasses.asdict(i), conductor_id=conductor_id,
                 created_at=now) for i in interfaces]
    with db.writer() as conn:
        conn.execute(sa.delete(IFACES).where(
            IFACES.c.conductor_id == conductor_id))
        if rows:
            conn.execute(sa.insert(IFACES), rows)


def list_hardware_interfaces(db: db_api.Database, conductor_id: int
                             ) -> list[HardwareInterface]:
    with db.reader() as conn:
        rows = conn.execute(sa.select(
            IFACES.c.hardware_type, IFACES.c.interface_type,
            IFACES.c.interface_name, IFACES.c.default).where(
                IFACES.c.conductor_id == conductor_id))
        return [HardwareInterface(*row) for row in rows]
