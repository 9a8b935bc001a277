# SPDX-License-Identifier: Apache-2.0
"""The change outbox: which nodes' providers need a push, recorded in the
node change's own transaction, and claimed by exactly one conductor.

Recording. :func:`install` hooks the engine (``before_execute``), so every
INSERT, UPDATE or DELETE of ``nodes`` that sets a column the provider
depends on (:data:`ferrum.placement.mapping.COLUMNS`), and every change of
``node_traits``, first inserts one outbox row per node it touches, on the
same connection and therefore in the same transaction. A hook rather than
a call at each write site because nodes are written from many places
(objects, claims, recovery, the PostgreSQL one-statement release), and a
site that forgot the call would silently lose updates; the hook sees them
all. The row is written before the statement, with the statement's own
WHERE clause, because after it the clause may no longer match (a claim sets
the ``allocation_id`` its WHERE requires to be NULL). The hook is installed
only when ``[placement]`` is configured: otherwise nothing changes at all.

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
from typing import Any, NamedTuple

import sqlalchemy as sa
from sqlalchemy.sql import visitors

from ferrum.db import api as db_api
from ferrum.db import models
from ferrum.objects import base
from ferrum.placement import mapping

LOG = logging.getLogger(__name__)

TABLE: sa.Table = models.PlacementOutbox.__table__  # type: ignore[assignment]
_NODES: sa.Table = models.Node.__table__  # type: ignore[assignment]
_TRAITS: sa.Table = models.NodeTrait.__table__  # type: ignore[assignment]
_NOW = 'ferrum_outbox_now'
_MARK = '_ferrum_outbox'


# ---- recording --------------------------------------------------------------

def install(db: db_api.Database) -> None:
    """Record node changes in the outbox from now on (idempotent)."""
    db.hook_statements(_before_execute)


def uninstall(db: db_api.Database) -> None:
    db.hook_statements(_before_execute, on=False)


class _Recorder(NamedTuple):
    """How to record one DML statement: the INSERT ... SELECT to run, and
    the columns that make an UPDATE relevant (None: always relevant)."""

    insert: sa.Insert
    set_columns: frozenset[str] | None
    #: The statement's parameters the INSERT takes (None: all of them).
    keys: frozenset[str] | None = None


def _select_into(select: sa.Select[Any]) -> sa.Insert:
    return sa.insert(TABLE).from_select(['node_uuid', 'created_at'], select)


def _dml_in(statement: Any) -> list[Any]:
    """``statement`` and the DML statements of the CTEs it uses, such as
    the UPDATE of nodes inside PostgreSQL's one-statement release (a plain
    traversal stops at a CTE's columns)."""
    found: list[Any] = []
    pending = [statement]
    seen: set[int] = set()
    while pending:
        current = pending.pop()
        if id(current) in seen:
            continue
        seen.add(id(current))
        for element in visitors.iterate(current):
            if isinstance(element, sa.sql.dml.UpdateBase):
                found.append(element)
            table = getattr(element, 'table', None)
            if isinstance(table, sa.CTE):
                pending.append(table.element)
    return found


def _recorders(statement: Any) -> list[_Recorder]:
    """The recorders of ``statement`` and of the DML in its CTEs."""
    found: list[_Recorder] = []
    now = sa.bindparam(_NOW, type_=sa.DateTime)
    for element in _dml_in(statement):
        table = getattr(element, 'table', None)
        where = getattr(element, 'whereclause', None)
        given = getattr(element, '_values', None) or {}
        values = {getattr(k, 'key', k): v for k, v in given.items()}
        if table is _NODES and isinstance(element, sa.Insert):
            found.append(_Recorder(sa.insert(TABLE).values(
                node_uuid=sa.bindparam('uuid'), created_at=now), None,
                frozenset({'uuid'})))
        elif table is _NODES:
            select = sa.select(_NODES.c.uuid, now)
            if where is not None:
                select = select.where(where)
            columns = None
            if isinstance(element, sa.Update):
                columns = frozenset(values)
            found.append(_Recorder(_select_into(select), columns))
        elif table is _TRAITS and isinstance(element, sa.Insert):
            node_id = values.get('node_id', sa.bindparam('node_id'))
            found.append(_Recorder(_select_into(sa.select(
                _NODES.c.uuid, now).where(_NODES.c.id == node_id)), None))
        elif table is _TRAITS:
            ids = sa.select(_TRAITS.c.node_id)
            if where is not None:
                ids = ids.where(where)
            found.append(_Recorder(_select_into(sa.select(
                _NODES.c.uuid, now).where(_NODES.c.id.in_(ids))), None))
    return found


#: Recorders by statement. Hot statements are built once (see
#: objects/node.py), so this stays small; it is cleared when ad-hoc
#: statements fill it. Values keep the statement alive, so its id() is
#: not reused while cached.
_CACHE: dict[int, tuple[sa.Executable, list[_Recorder]]] = {}
_CACHE_SIZE = 512


def _recorders_cached(statement: sa.Executable) -> list[_Recorder]:
    cached = _CACHE.get(id(statement))
    if cached is not None and cached[0] is statement:
        return cached[1]
    recorders = _recorders(statement)
    if len(_CACHE) >= _CACHE_SIZE:
        _CACHE.clear()
    _CACHE[id(statement)] = (statement, recorders)
    return recorders


def _before_execute(conn: sa.Connection, clause: Any, multiparams: Any,
                    params: Any, _options: Any) -> None:
    if not isinstance(clause, sa.sql.dml.UpdateBase) or (
            getattr(clause, 'table', None) is TABLE):
        return
    recorders = _recorders_cached(clause)
    if not recorders:
        return
    param_sets: Sequence[dict[str, Any]] = multiparams or [params or {}]
    now = base.utcnow()
    for recorder in recorders:
        seen: set[Any] = set()
        for values in param_sets:
            if recorder.set_columns is not None and not (
                    (recorder.set_columns | set(values)) & mapping.COLUMNS):
                continue
            # An executemany of trait rows names the same node many times.
            key = values.get('node_id', id(values))
            if key in seen:
                continue
            seen.add(key)
            if recorder.keys is not None:
                values = {k: values[k] for k in recorder.keys}
            conn.execute(recorder.insert, dict(values, **{_NOW: now}))


# ---- the queue --------------------------------------------------------------

class Head(NamedTuple):
    id: int
    node_uuid: str


def enqueue(db: db_api.Database, node_uuids: Iterable[str]) -> int:
    """Queue a push of these nodes (the reconcile's way to repair drift)."""
    now = base.utcnow()
    rows = [{'node_uuid': u, 'created_at': now} for u in node_uuids]
    if rows:
        with db.writer() as conn:
            conn.execute(sa.insert(TABLE), rows)
    return len(rows)


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
