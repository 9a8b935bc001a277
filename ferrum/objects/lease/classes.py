# SPDX-License-Identifier: Apache-2.0
"""Which leases have a reservation class in Placement, and their SQL.

A lease booked with ``placement_class`` gets a custom resource class
(``CUSTOM_RESERVATION_<uuid>``, :mod:`ferrum.placement.reservations`)
that a flavor can name. Two columns of the lease row track it:
``placement_class`` (the lease wants one, until it is deleted after the
lease is over) and ``class_created`` (it exists in Placement, so the API
shows ``reservation_class``). The class sweeps
(:mod:`ferrum.placement.leases`) and the lease audit write them here for
many leases at once; :meth:`ferrum.objects.lease.Lease.class_was_created`
marks one. The reads here are the audits' and the consumers' view of
those leases.
"""

from collections.abc import Collection, Iterable
from typing import NamedTuple

import sqlalchemy as sa

from ferrum.common import lease_statuses as statuses
from ferrum.db import api as db_api
from ferrum.db import models

_TABLE = models.table(models.Lease)


def forget(db: db_api.Database, lease_ids: Collection[int]) -> None:
    """The reservation classes of these leases are gone from Placement."""
    if lease_ids:
        with db.writer() as conn:
            conn.execute(sa.update(_TABLE).where(_TABLE.c.id.in_(
                sorted(lease_ids))).values(placement_class=False,
                                           class_created=False))


def created(db: db_api.Database, lease_ids: Collection[int]) -> None:
    """The reservation classes of these leases now exist in Placement."""
    if lease_ids:
        with db.writer() as conn:
            # Not once a class is forgotten: a late writer must not bring
            # back the field of a class deleted meanwhile.
            conn.execute(sa.update(_TABLE).where(
                _TABLE.c.id.in_(sorted(lease_ids)),
                _TABLE.c.placement_class.is_(True)).values(
                    class_created=True))


class ClassedLease(NamedTuple):
    id: int
    uuid: str
    status: str
    project: str
    placement_class: bool
    #: The class was created (and the lease shows it); before that, a
    #: pending lease waits for the engine's sweep, which is not drift.
    class_created: bool


def classed_or_named(db: db_api.Database, uuids: Collection[str]
                     ) -> dict[str, ClassedLease]:
    """The leases in Placement, and those named ``uuids``, by uuid."""
    with db.reader() as conn:
        rows = conn.execute(sa.select(
            _TABLE.c.id, _TABLE.c.uuid, _TABLE.c.status,
            _TABLE.c.project, _TABLE.c.placement_class,
            _TABLE.c.class_created).where(sa.or_(
                _TABLE.c.placement_class.is_(True),
                _TABLE.c.uuid.in_(sa.bindparam('b_uuids', expanding=True)))),
            {'b_uuids': sorted(uuids)})
        return {row.uuid: ClassedLease(*row) for row in rows}


def classed_uuids(db: db_api.Database) -> set[str]:
    """The uuids of the leases in Placement (each has a consumer there)."""
    with db.reader() as conn:
        return set(conn.execute(sa.select(_TABLE.c.uuid).where(
            _TABLE.c.placement_class.is_(True))).scalars())


def over_with_class(db: db_api.Database) -> int:
    """How many leases are over and still have their class."""
    with db.reader() as conn:
        return int(conn.execute(sa.select(sa.func.count()).where(
            _TABLE.c.placement_class.is_(True),
            _TABLE.c.status.in_(sorted(statuses.FINAL)))).scalar() or 0)


def project_while_in(db: db_api.Database, lease_uuid: str,
                     wanted: Iterable[str]) -> str | None:
    """The project of lease ``lease_uuid`` while its status is one of
    ``wanted``; None otherwise (or when there is no such lease)."""
    with db.reader() as conn:
        row = conn.execute(sa.select(_TABLE.c.project, _TABLE.c.status).where(
            _TABLE.c.uuid == lease_uuid)).first()
    return row.project if row and row.status in tuple(wanted) else None
