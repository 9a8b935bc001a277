# SPDX-License-Identifier: Apache-2.0
"""What ferrum remembers about Placement: per node, what it last wrote to the
provider (``placement_providers``); per conductor, whether Placement
answers (``placement_status``). Both feed the status view and the audit.
"""

from __future__ import annotations

import datetime
from collections.abc import Iterable, Sequence
from typing import Any, NamedTuple

import sqlalchemy as sa
from oslo_db import exception as db_exc

from ferrum.db import api as db_api
from ferrum.db import models
from ferrum.objects import base
from ferrum.placement import mapping

PROVIDERS = models.table(models.PlacementProvider)
STATUS = models.table(models.PlacementStatus)

SYNCED = 'synced'
#: Placement refused a write for a reason re-reading does not fix (an
#: inventory in use, a bad value): recorded, retried at the next change
#: or reconcile, not in a loop.
CONFLICT = 'conflict'
#: The provider is another service's (OWNER_NOVA, or not ferrum's marker).
CLASH = 'clash'

OK = 'ok'
UNAVAILABLE = 'unavailable'
TOO_OLD = 'too_old'


class Record(NamedTuple):
    node_uuid: str
    generation: int | None
    resource_class: str | None
    reserved: int | None
    traits: frozenset[str]
    state: str
    last_error: str | None
    updated_at: datetime.datetime
    reservation: str | None = None
    reservation_reserved: int | None = None

    def matches(self, provider: mapping.Provider) -> bool:
        """Whether ferrum last wrote exactly ``provider``."""
        return (self.state == SYNCED
                and self.resource_class == provider.resource_class
                and (self.resource_class is None
                     or self.reserved == provider.reserved)
                and self.reservation == provider.reservation
                and (self.reservation is None
                     or self.reservation_reserved
                     == provider.reservation_reserved)
                and self.traits == provider.traits)


def _record(row: Any) -> Record:
    return Record(row.node_uuid, row.generation, row.resource_class,
                  row.reserved, frozenset(row.traits or ()), row.state,
                  row.last_error, row.updated_at, row.reservation,
                  row.reservation_reserved)


def get(db: db_api.Database, node_uuid: str) -> Record | None:
    with db.reader() as conn:
        row = conn.execute(sa.select(PROVIDERS).where(
            PROVIDERS.c.node_uuid == node_uuid)).first()
    return None if row is None else _record(row)


def get_many(db: db_api.Database,
             node_uuids: Sequence[str]) -> dict[str, Record]:
    """The records of these nodes, in one query (a node never pushed has
    none)."""
    with db.reader() as conn:
        return {row.node_uuid: _record(row) for row in conn.execute(
            sa.select(PROVIDERS).where(PROVIDERS.c.node_uuid.in_(
                sa.bindparam('uuids', expanding=True))),
            {'uuids': list(node_uuids)})}


def all_records(db: db_api.Database) -> dict[str, Record]:
    with db.reader() as conn:
        return {row.node_uuid: _record(row)
                for row in conn.execute(sa.select(PROVIDERS))}


def problems(db: db_api.Database, limit: int = 100) -> list[Record]:
    """Nodes whose last push was refused or clashed, newest first."""
    with db.reader() as conn:
        return [_record(row) for row in conn.execute(
            sa.select(PROVIDERS).where(PROVIDERS.c.state != SYNCED)
            .order_by(PROVIDERS.c.updated_at.desc()).limit(limit))]


def _upsert(db: db_api.Database, node_uuid: str,
            values: dict[str, Any]) -> None:
    values = dict(values, updated_at=base.utcnow())
    with db.writer() as conn:
        if conn.execute(sa.update(PROVIDERS).where(
                PROVIDERS.c.node_uuid == node_uuid).values(
                    **values)).rowcount:
            return
    try:
        with db.writer() as conn:
            conn.execute(sa.insert(PROVIDERS).values(node_uuid=node_uuid,
                                                     **values))
    except db_exc.DBDuplicateEntry:
        # Inserted meanwhile by a conductor that held the node before.
        with db.writer() as conn:
            conn.execute(sa.update(PROVIDERS).where(
                PROVIDERS.c.node_uuid == node_uuid).values(**values))


def save_synced(db: db_api.Database, provider: mapping.Provider,
                generation: int) -> None:
    _upsert(db, provider.uuid, {
        'generation': generation, 'resource_class': provider.resource_class,
        'reserved': provider.reserved, 'traits': sorted(provider.traits),
        'reservation': provider.reservation,
        'reservation_reserved': provider.reservation_reserved,
        'state': SYNCED, 'last_error': None})


def save_synced_many(db: db_api.Database,
                     pushed: Sequence[tuple[mapping.Provider, int | None]]
                     ) -> None:
    """:func:`save_synced` for nodes that already have a record, in one
    transaction (a batch push only covers such nodes). A generation of
    None makes the next push read the provider first."""
    if not pushed:
        return
    now = base.utcnow()
    with db.writer() as conn:
        conn.execute(sa.update(PROVIDERS).where(
            PROVIDERS.c.node_uuid == sa.bindparam('uuid')).values(
                generation=sa.bindparam('new_generation'),
                resource_class=sa.bindparam('rc'),
                reserved=sa.bindparam('new_reserved'),
                reservation=sa.bindparam('new_reservation'),
                reservation_reserved=sa.bindparam('new_res_reserved'),
                traits=sa.bindparam('provider_traits',
                                     type_=PROVIDERS.c.traits.type),
                state=SYNCED,
                last_error=None, updated_at=now), [
                    {'uuid': p.uuid, 'new_generation': generation,
                     'rc': p.resource_class, 'new_reserved': p.reserved,
                     'new_reservation': p.reservation,
                     'new_res_reserved': p.reservation_reserved,
                     'provider_traits': sorted(p.traits)}
                    for p, generation in pushed])


def save_owned_traits(db: db_api.Database, node_uuid: str,
                      traits: Iterable[str], state: str) -> None:
    """Remember traits about to be written, before writing them: should the
    conductor die between the two, they are still known to be ferrum's."""
    _upsert(db, node_uuid, {'traits': sorted(traits), 'state': state})


def save_problem(db: db_api.Database, node_uuid: str, state: str,
                 error: str) -> None:
    _upsert(db, node_uuid, {'state': state, 'last_error': error[:1000]})


def distrust(db: db_api.Database, node_uuids: Iterable[str]) -> None:
    """Make the next push of these nodes read their providers first (the
    reconcile saw them drift, so the record no longer tells the truth)."""
    uuids = sorted(node_uuids)
    if uuids:
        with db.writer() as conn:
            conn.execute(sa.update(PROVIDERS).where(
                PROVIDERS.c.node_uuid.in_(uuids)).values(generation=None))


def bump_generations(db: db_api.Database, node_uuids: Iterable[str],
                     since: datetime.datetime) -> None:
    """An allocation write of ours, sent at ``since``, moved these
    providers' generations by one: their records follow, so that the next
    push of an unchanged inventory trusts them (one batched write, not a
    409 and two reads per node).

    Only records written before ``since`` move: one the sync saved
    meanwhile may already count our write, and must not count it twice
    (a record ahead of Placement could later match a foreign write and
    let a write through blind). A record behind Placement (someone else
    wrote too) only costs a 409 and a read, as before.
    """
    uuids = sorted(node_uuids)
    if uuids:
        with db.writer() as conn:
            conn.execute(sa.update(PROVIDERS).where(
                PROVIDERS.c.node_uuid.in_(uuids),
                PROVIDERS.c.generation.is_not(None),
                PROVIDERS.c.updated_at < since).values(
                    generation=PROVIDERS.c.generation + 1))


def forget(db: db_api.Database, node_uuid: str) -> None:
    with db.writer() as conn:
        conn.execute(sa.delete(PROVIDERS).where(
            PROVIDERS.c.node_uuid == node_uuid))


# ---- per conductor --------------------------------------------------------

def set_status(db: db_api.Database, host: str, state: str,
               error: str | None) -> None:
    values = {'state': state, 'last_error': error, 'since': base.utcnow()}
    with db.writer() as conn:
        if conn.execute(sa.update(STATUS).where(STATUS.c.host == host)
                        .values(**values)).rowcount:
            return
        conn.execute(sa.insert(STATUS).values(host=host, **values))


def statuses(db: db_api.Database) -> list[dict[str, Any]]:
    with db.reader() as conn:
        return [dict(row._mapping) for row in conn.execute(
            sa.select(STATUS).order_by(STATUS.c.host))]
