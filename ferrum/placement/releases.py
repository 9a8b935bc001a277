# SPDX-License-Identifier: Apache-2.0
"""The queue of Placement consumers to release (``placement_releases``).

With ``[allocation] backend = placement`` every allocation is a consumer
in Placement whose uuid is the allocation's. When an allocation goes, its
consumer must go too, whichever way it went: an explicit delete, a
tear-down, an ``instance_uuid`` PATCH, the node's deletion, a lease's end.

Recording. The objects layer queues a ``placement_releases`` row per
allocation in the transaction of every deletion of allocations
(:mod:`ferrum.objects.placement_queue`, which says why that covers every
deletion), whenever allocations are claimed in Placement
(:attr:`ferrum.db.api.Database.queues_releases`).
Code that fails an allocation whose claim may have reached Placement
(the answer was lost in an outage) calls :func:`record` in its own
transaction.

Releasing. The path that deleted the allocation releases its consumer at
once after the commit (:meth:`ferrum.placement.service.PlacementService.
release_now`), so both sides agree before the API answers; when Placement
cannot be reached the row stays, and the conductor's sync worker drains
it (``PlacementService.drain``, rows older than :data:`GRACE`) once
Placement answers. The release itself is :func:`ferrum.placement.claims.
release`.
"""

from __future__ import annotations

import datetime
from collections.abc import Iterable
from typing import NamedTuple

import sqlalchemy as sa

from ferrum.db import api as db_api
from ferrum.objects import base
from ferrum.objects import placement_queue

TABLE = placement_queue.RELEASES
#: Seconds the sync worker leaves a queued release to the path that
#: queued it (which releases at once after its commit), so that the two
#: do not send the same release.
GRACE = 2.0


def record(db: db_api.Database, consumer_uuids: Iterable[str]) -> None:
    """Queue these consumers' release (joins the caller's transaction)."""
    placement_queue.release(db, [(uuid, None) for uuid in consumer_uuids])


class Queued(NamedTuple):
    """One consumer's queued rows, and the nodes they name."""

    ids: list[int]
    node_uuids: set[str]


def queued(db: db_api.Database, consumer_uuids: list[str] | None,
           limit: int) -> dict[str, Queued]:
    """The queued releases of ``consumer_uuids``, or (None) the oldest
    ones past :data:`GRACE`, by consumer, at most ``limit`` rows."""
    query = sa.select(TABLE).order_by(TABLE.c.id).limit(limit)
    if consumer_uuids is not None:
        query = query.where(TABLE.c.consumer_uuid.in_(consumer_uuids))
    else:
        # Fresh rows are the deleting path's to release at once.
        query = query.where(TABLE.c.created_at < base.utcnow()
                            - datetime.timedelta(seconds=GRACE))
    found: dict[str, Queued] = {}
    with db.reader() as conn:
        for row in conn.execute(query):
            entry = found.setdefault(row.consumer_uuid, Queued([], set()))
            entry.ids.append(row.id)
            if row.node_uuid:
                entry.node_uuids.add(row.node_uuid)
    return found


def done(db: db_api.Database, ids: list[int]) -> None:
    """Drop the rows of releases done (or left to the audit)."""
    with db.writer() as conn:
        conn.execute(sa.delete(TABLE).where(TABLE.c.id.in_(ids)))


def backlog(db: db_api.Database) -> int:
    with db.reader() as conn:
        return int(conn.execute(sa.select(sa.func.count()).select_from(
            TABLE)).scalar() or 0)
