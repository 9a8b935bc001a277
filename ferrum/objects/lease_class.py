# SPDX-License-Identifier: Apache-2.0
"""Which leases have a reservation class in Placement, and their SQL.

A lease booked with ``placement_class`` gets a custom resource class
(``CUSTOM_RESERVATION_<uuid>``, :mod:`ferrum.placement.reservations`)
that a flavor can name. Two columns of the lease row track it:
``placement_class`` (the lease wants one, until it is deleted after the
lease is over) and ``class_created`` (it exists in Placement, so the API
shows ``reservation_class``). The class sweeps
(:mod:`ferrum.leases.placement`) and the lease audit write them here for
many leases at once; :meth:`ferrum.objects.lease.Lease.class_was_created`
marks one.
"""

from collections.abc import Collection

import sqlalchemy as sa

from ferrum.db import api as db_api
from ferrum.db import models

_TABLE: sa.Table = models.Lease.__table__  # type: ignore[assignment]


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
