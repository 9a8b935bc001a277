# SPDX-License-Identifier: Apache-2.0
"""The change outbox: which nodes' providers need a push, recorded in the
node change's own transaction, and claimed by exactly one conductor.

Recording. The objects layer queues a row per node in the transaction of
every write of a column the provider depends on
(:data:`ferrum.placement.mapping.COLUMNS`) and of every change of the
node's traits (:mod:`ferrum.objects.placement_queue`, which says why that
covers every write), whenever ``[placement]`` is configured
(:attr:`ferrum.db.api.Database.queues_pushes`); otherwise nothing is
queued at all.

Claiming. A node's rows are pushed by whoever holds its *oldest* row: a
conditional UPDATE sets ``claimed_by`` on it only while nobody holds it (or
its holder stopped refreshing it for a heartbeat timeout: that conductor
died and its backlog is taken over). Holding the head row serialises the
pushes of one node across conductors; the holder reads the node, pushes,
and deletes the rows it saw before reading, so a change made meanwhile
stays queued for the next round.
"""

from __future__ import annotations

import datetime
import logging
from collections.abc import Iterable, Sequence
from typing import NamedTuple

import sqlalchemy as sa

from ferrum.db import api as db_api
from ferrum.objects import base
from ferrum.objects import placement_queue

LOG = logging.getLogger(__name__)

TABLE = placement_queue.OUTBOX


# ---- the queue --------------------------------------------------------------

class Head(NamedTuple):
    id: int
    node_uuid: str


def enqueue(db: db_api.Database, node_uuids: Iterable[str]) -> int:
    """Queue a push of these nodes (the reconcile's way to repair drift)."""
    return placement_queue.push(db, node_uuids)


def heads(db: db_api.Database, stale_before: datetime.datetime,
          limit: int) -> list[Head]:
    """The oldest row of each queued node, when free to claim."""
    first = sa.select(sa.func.min(TABLE.c.id)).group_by(TABLE.c.node_uuid)
    query = sa.select(TABLE.c.id, TABLE.c.node_uuid).where(
        TABLE.c.id.in_(first),
        sa.or_(TABLE.c.claimed_by.is_(None),
               TABLE.c.claimed_at < stale_before)).order_by(
                   TABLE.c.id).limit(limit)
    with db.reader() as conn:
        return [Head(row.id, row.node_uuid) for row in conn.execute(query)]


def claim(db: db_api.Database, host: str, heads: list[Head],
          stale_before: datetime.datetime) -> list[Head]:
    """Take ``heads`` for ``host`` in one conditional UPDATE; the ones won.

    Each row is taken only while free (or stale), so of two conductors
    claiming the same head one gets it, whatever the database.
    """
    if not heads:
        return []
    with db.writer() as conn:
        won = set(conn.execute(sa.update(TABLE).where(
            TABLE.c.id.in_(sa.bindparam('ids', expanding=True)),
            sa.or_(TABLE.c.claimed_by.is_(None),
                   TABLE.c.claimed_at < stale_before)).values(
                       claimed_by=host, claimed_at=base.utcnow())
            .returning(TABLE.c.id), {'ids': [h.id for h in heads]}).scalars())
    return [head for head in heads if head.id in won]


def queued(db: db_api.Database, node_uuids: Sequence[str]
           ) -> dict[str, list[int]]:
    """The queued rows of these nodes, read before reading the nodes: the
    ones a push then covers. (Not "up to the newest id": on PostgreSQL a
    smaller id can commit later, after the node was read.)"""
    found: dict[str, list[int]] = {uuid: [] for uuid in node_uuids}
    with db.reader() as conn:
        for row in conn.execute(sa.select(
                TABLE.c.id, TABLE.c.node_uuid).where(TABLE.c.node_uuid.in_(
                    sa.bindparam('uuids', expanding=True))),
                {'uuids': list(node_uuids)}):
            found[row.node_uuid].append(row.id)
    return found


def finish(db: db_api.Database, host: str,
           pushed: Sequence[tuple[Head, list[int]]]) -> set[int]:
    """Drop the rows each push covered, where the node's claim is still
    ours, in one transaction; returns the heads whose claim was.

    A head missing from the answer lost its claim (taken over after this
    conductor looked dead): its rows stay for the new holder, which pushes
    again.
    """
    if not pushed:
        return set()
    with db.writer() as conn:
        held = set(conn.execute(sa.select(TABLE.c.id).where(
            TABLE.c.id.in_(sa.bindparam('ids', expanding=True)),
            TABLE.c.claimed_by == host), {'ids': [
                head.id for head, _rows in pushed]}).scalars())
        rows = [row for head, covered in pushed if head.id in held
                for row in covered]
        if rows:
            conn.execute(sa.delete(TABLE).where(TABLE.c.id.in_(
                sa.bindparam('ids', expanding=True))), {'ids': rows})
    return held


def unclaim(db: db_api.Database, host: str,
            node_uuid: str | None = None) -> int:
    """Give back ``host``'s claims (all, or one node's): on start-up, for
    the claims a killed run left, and during an outage, so that another
    conductor that does reach Placement can push them."""
    query = sa.update(TABLE).where(TABLE.c.claimed_by == host)
    if node_uuid is not None:
        query = query.where(TABLE.c.node_uuid == node_uuid)
    with db.writer() as conn:
        return conn.execute(query.values(claimed_by=None,
                                         claimed_at=None)).rowcount


class Backlog(NamedTuple):
    size: int
    nodes: int
    oldest: datetime.datetime | None


def backlog(db: db_api.Database) -> Backlog:
    with db.reader() as conn:
        row = conn.execute(sa.select(
            sa.func.count(), sa.func.count(sa.distinct(TABLE.c.node_uuid)),
            sa.func.min(TABLE.c.created_at))).one()
    return Backlog(int(row[0]), int(row[1]), row[2])
