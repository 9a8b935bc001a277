# SPDX-License-Identifier: Apache-2.0
"""Events: what happened to nodes, allocations and leases, and the feed.

One table, ``events``, holds a node's history (Ironic's ``node_history``,
read through :mod:`ferrum.objects.node_history`) and the allocation and
lease events; ``GET /v1/events?since=<id>`` reads them all in id order.

**Written with the change.** :func:`add` queues rows on the caller's write
transaction; they are inserted as its last statements, so an event is
committed exactly when the change it records is (a conductor killed
mid-operation leaves the events of what it committed, no more).

**No id visible before a lower one.** A feed follower asks for ids above
the last it saw, so it must never be shown an id while a lower one may
still be committed: with a bare sequence, PostgreSQL transactions commit
out of order (id 11 visible while the transaction holding id 10 is still
running), and a follower that read 11 would never see 10. On PostgreSQL a
transaction therefore takes its ids (``events_id_seq``) as its last
statement (:meth:`ferrum.db.api.Database.before_commit`), after it took
the feed's advisory lock in *shared* mode, which it holds to its commit.
Writers share that lock, so they never wait for one another. The feed's
reader (:func:`newest`) reads the highest id there is, and in the same
statement takes the lock *exclusively* for an instant: once it has it,
every writer that held an id when it read has ended, so every id up to
the one it read is committed (or rolled back, a gap no later id fills).
It serves ids up to that horizon only. Taking the ids last, after every
row lock of the transaction, keeps a change's events after those of the
changes it waited for.

**Bounded waits.** A writer that took its ids and then hangs would keep
the reader from its lock: the server ends such a transaction after
``[database] event_writer_timeout`` seconds (it is idle in a transaction,
and the lock goes with it). The reader waits ``[database]
event_feed_wait`` milliseconds at most and otherwise answers with the
horizon it last had, so a follower is held up by at most the writer
timeout, then goes on. Writers that arrive while the reader waits queue
behind it for that long at most; after a wait that failed the reader
tries again only five waits later, so a hung writer keeps the others
waiting a sixth of the time at most.

SQLite has one writer at a time (``BEGIN IMMEDIATE``), so there the rows
are inserted at once and take the next rowid, which is in commit order
already: no lock, one statement, and the horizon is the highest id. A
rowid is never given twice because the cleanup never deletes the newest
row.
"""

from __future__ import annotations

import datetime
import functools
import operator
import random
import sqlite3
import threading
import time
import weakref
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import sqlalchemy as sa
from oslo_db import exception as db_exc

from ferrum.common import requester
from ferrum.db import api as db_api
from ferrum.db import models
from ferrum.objects import base

TABLE = models.table(models.Event)
FIELDS: tuple[str, ...] = tuple(c.name for c in TABLE.columns)
#: The columns of an entry (:func:`entry`); its id is given when it is
#: written.
COLUMNS: tuple[str, ...] = tuple(name for name in FIELDS if name != 'id')
_EMPTY = dict.fromkeys(COLUMNS)
#: An entry's values in the order of COLUMNS.
_VALUES = operator.itemgetter(*COLUMNS)
INFO = 'INFO'
ERROR = 'ERROR'
_PENDING = 'ferrum_events'
#: The feed's advisory lock (PostgreSQL): b'ferrumEv' as a number.
FEED_LOCK = int.from_bytes(b'ferrumEv', 'big')
_INSERT = sa.insert(TABLE)
_NEWEST = sa.select(sa.func.max(TABLE.c.id))
#: What a transaction runs before it takes ids: the feed's lock, shared
#: with the other writers, and the server's deadline for its commit.
_TAIL = ('SELECT pg_advisory_xact_lock_shared(%d), '
         "set_config('idle_in_transaction_session_timeout', '%%d', true)"
         % FEED_LOCK)
#: The feed's horizon: the newest id in the statement's snapshot, which is
#: taken before the lock is had, exclusively, for an instant (taken and
#: given back in the statement, so that no lock outlives it, inside a
#: caller's transaction or not). Every id up to it is then committed or
#: rolled back: an id below it was taken before the snapshot, so its
#: writer held the shared lock then, and ended before the exclusive lock
#: was granted. (A snapshot taken after the lock would not do: writers
#: that start once it is given back may commit a higher id while a lower
#: one is still open.)
_DRAIN = ('SELECT (SELECT max(id) FROM events), pg_advisory_lock(%d), '
          'pg_advisory_unlock(%d)' % (FEED_LOCK, FEED_LOCK))
#: The tail and the insert of one row in one statement: MATERIALIZED
#: runs the lock (and the timeout) before the insert's row, whose id
#: (the column's default) is taken only then.
_TAIL_AND_INSERT = 'WITH tail AS MATERIALIZED (%s) INSERT INTO events (%s) ' \
    'SELECT %s FROM tail' % (_TAIL, ', '.join(COLUMNS), ', '.join(
        '%%%%(%s)s' % name for name in COLUMNS))
#: SQLite's insert as plain SQL: the statement runs in every recording
#: transaction, and what SQLAlchemy does around a statement costs more
#: than SQLite's insert (see :func:`_insert_sqlite`;
#: doc/performance/history-and-events.md, issue 31).
_SQLITE_INSERT = 'INSERT INTO events (%s) VALUES (%s)' % (
    ', '.join(COLUMNS), ', '.join('?' * len(COLUMNS)))


def entry(event_type: str, event: str, severity: str = INFO,
          **fields: Any) -> dict[str, Any]:
    """One event row, without its id (given when it is written).

    :param fields: the other columns (``node_id``, ``lease_uuid``,
        ``owner``, ...); those not given are NULL, but ``user_id`` and
        ``project_id``, which name who asked
        (:mod:`ferrum.common.requester`) when someone did, and
        ``created_at``, now.
    :raises TypeError: a field is not a column of ``events``.
    """
    row = _EMPTY.copy()
    row.update(fields)
    row['event_type'], row['event'], row['severity'] = (
        event_type, event, severity)
    row['uuid'] = _entry_uuid()
    if row['user_id'] is None and row['project_id'] is None:
        asked = requester.current()
        row['user_id'], row['project_id'] = asked.user_id, asked.project_id
    if row['created_at'] is None:
        row['created_at'] = base.utcnow()
    if len(row) != len(_EMPTY):
        raise TypeError('not an event column: %s' % ', '.join(
            sorted(set(row) - set(_EMPTY))))
    return row


# A version 4 UUID's fixed bits (RFC 9562): the version nibble and the
# variant's two bits.
_UUID_CLEAR = ~((0xf000 << 64) | (0xc000 << 48))
_UUID_SET = (0x4000 << 64) | (0x8000 << 48)


def _entry_uuid() -> str:
    # Not uuid4(): it reads os.urandom, a system call for every entry,
    # which made a quarter of what building one costs in conductor_flow
    # (doc/performance/history-and-events.md, issue 31). An entry's uuid
    # only names it among its node's, and guards nothing (reading it is the
    # node's policy), so the random module's generator will do: seeded
    # from os.urandom, and seeded again in a forked child. Formatted by
    # hand: a uuid.UUID object costs more than twice as much, for the same
    # text.
    text = '%032x' % (random.getrandbits(128) & _UUID_CLEAR | _UUID_SET)
    return '%s-%s-%s-%s-%s' % (text[:8], text[8:12], text[12:16],
                               text[16:20], text[20:])


def add(db: db_api.Database, rows: Sequence[Mapping[str, Any]]) -> None:
    """Record ``rows`` (see :func:`entry`) in the caller's write
    transaction (or one of their own), at its end."""
    if not rows or not db.records_history:
        return
    conn = db.current_writer()
    if conn is None:
        with db.writer():
            add(db, rows)
        return
    if db.is_sqlite:
        # One writer at a time: the rowid (max + 1, never reused, see
        # prune) is already in commit order.
        _insert_sqlite(conn, [_sqlite_values(conn, row) for row in rows])
        return
    data = db.transaction_data()
    pending = data.get(_PENDING)
    if pending is None:
        pending = data[_PENDING] = []
        db.before_commit(functools.partial(
            _write, pending, db.event_writer_timeout_ms))
    pending.extend(dict(row) for row in rows)


def _insert_sqlite(conn: sa.Connection, values: list[tuple[Any, ...]]
                   ) -> None:
    if len(values) > 1:
        conn.exec_driver_sql(_SQLITE_INSERT, values)
        return
    # One row, the usual case, straight to the driver: SQLAlchemy's
    # execution context costs more than SQLite's insert itself (measured
    # in conductor_flow, doc/performance/history-and-events.md, issue
    # 31). A statement that fails changes nothing, so on an error it is
    # sent again through SQLAlchemy, and the error raised is the one
    # oslo.db translates, as for any other statement (a full disk, a lost
    # file).
    driver: Any = conn.connection.driver_connection
    try:
        driver.execute(_SQLITE_INSERT, values[0])
    except sqlite3.Error:
        conn.exec_driver_sql(_SQLITE_INSERT, values[0])


def _sqlite_values(conn: sa.Connection,
                   row: Mapping[str, Any]) -> tuple[Any, ...]:
    # The columns' own conversions (a datetime as SQLAlchemy stores it on
    # SQLite), so that rows read back and compare as those it writes.
    values: tuple[Any, ...] = _VALUES(row)
    conversions = _conversions(conn.dialect)
    if not conversions:
        return values
    converted = list(values)
    for index, convert in conversions:
        if converted[index] is not None:
            converted[index] = convert(converted[index])
    return tuple(converted)


@functools.cache
def _conversions(dialect: sa.Dialect) -> tuple[tuple[int, Any], ...]:
    """The columns that the dialect converts (on SQLite, the times), by
    position in :data:`COLUMNS`, with their conversion."""
    found = ((index, TABLE.c[name].type.dialect_impl(dialect)
              .bind_processor(dialect))
             for index, name in enumerate(COLUMNS))
    return tuple((index, convert) for index, convert in found
                 if convert is not None)


def _write(rows: list[dict[str, Any]], timeout_ms: int,
           conn: sa.Connection) -> None:
    if len(rows) == 1:
        # The usual case in one round trip, sent as plain SQL: what
        # SQLAlchemy does around a compiled statement of 17 parameters
        # cost about 50 us of CPU per entry, on the critical path of a
        # busy conductor (doc/performance/history-and-events.md, issue
        # 31). The row goes as it is: no column of events is converted on
        # PostgreSQL (its driver takes times as they are). exec_driver_sql
        # still goes through the engine, so an error is translated by
        # oslo.db as for any other statement.
        conn.exec_driver_sql(_TAIL_AND_INSERT % (timeout_ms,), rows[0])
        return
    conn.exec_driver_sql(_TAIL % (timeout_ms,))
    conn.execute(_INSERT, rows)


# ---- the feed ---------------------------------------------------------------

def since(db: db_api.Database, after: int, limit: int,
          project: str | None = None, upto: int | None = None
          ) -> list[dict[str, Any]]:
    """Events with an id above ``after`` (and at most ``upto``), oldest
    first, at most ``limit``.

    :param project: only the events the project may see (it owned or
        leased the node, owns the allocation, holds the lease); None for
        all.
    """
    query = sa.select(TABLE).where(TABLE.c.id > after)
    if upto is not None:
        query = query.where(TABLE.c.id <= upto)
    if project is not None:
        query = query.where(sa.or_(TABLE.c.owner == project,
                                   TABLE.c.lessee == project))
    query = query.order_by(TABLE.c.id).limit(limit)
    with db.reader() as conn:
        return [dict(row) for row in conn.execute(query).mappings()]


def newest(db: db_api.Database) -> int:
    """The feed's horizon: the highest event id below which every event is
    committed or never will be (0 when there is none). A read that starts
    after this call sees every event up to it."""
    if db.is_sqlite:
        return _max_id(db)
    return _horizon(db).get(db)


def _max_id(db: db_api.Database) -> int:
    with db.reader() as conn:
        return int(conn.execute(_NEWEST).scalar() or 0)


class Horizon:
    """When a PostgreSQL database's feed last failed to drain its writers,
    and what it knew then.

    :param clock: seconds, monotonic (injectable for tests).
    """

    #: How long after a wait that timed out before trying again, in
    #: waits: the writers queue behind one wait in six at most.
    BACK_OFF = 5

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self._clock = clock
        self._lock = threading.Lock()
        self._value = 0
        self._back_off_until = float('-inf')

    def get(self, db: db_api.Database) -> int:
        # Drained at every call, not kept: a client that wrote, then
        # reads the feed, sees what it wrote (and a drain with no writer
        # under way costs one round trip).
        with self._lock:
            if self._clock() < self._back_off_until:
                return self._value
        try:
            value = self._drain(db)
        except (db_exc.DBError, sa.exc.DBAPIError) as exc:
            if not _timed_out(exc):
                raise
            # A writer holds its ids (hung, or a long commit): serve what
            # was known, and let the writers be for a while.
            with self._lock:
                self._back_off_until = self._clock() + (
                    self.BACK_OFF * db.event_feed_wait_ms / 1000)
                return self._value
        with self._lock:
            self._value = max(self._value, value)
        return value

    @staticmethod
    def _drain(db: db_api.Database) -> int:
        with db.reader() as conn:
            # A savepoint: a wait that times out must not end the
            # transaction of a caller that reads on (the feed's handler).
            with conn.begin_nested():
                conn.exec_driver_sql("SELECT set_config('lock_timeout', "
                                     "'%d', true)" % db.event_feed_wait_ms)
                newest = conn.exec_driver_sql(_DRAIN).scalar()
            return int(newest or 0)


_HORIZONS: weakref.WeakKeyDictionary[db_api.Database, Horizon] = (
    weakref.WeakKeyDictionary())
_HORIZONS_LOCK = threading.Lock()


def _horizon(db: db_api.Database) -> Horizon:
    with _HORIZONS_LOCK:
        horizon = _HORIZONS.get(db)
        if horizon is None:
            horizon = _HORIZONS[db] = Horizon()
        return horizon


def _timed_out(exc: BaseException) -> bool:
    """Whether the error is PostgreSQL's lock_timeout (SQLSTATE 55P03),
    as the driver raised it or wrapped by SQLAlchemy or oslo.db."""
    seen: BaseException | None = exc
    while seen is not None:
        if '55P03' in (getattr(seen, 'pgcode', None),
                       getattr(seen, 'sqlstate', None)):
            return True
        seen = (getattr(seen, 'orig', None)
                or getattr(seen, 'inner_exception', None) or seen.__cause__)
    return False


# ---- pruning ----------------------------------------------------------------

def prune(db: db_api.Database, max_entries: int, minimum_days: int,
          retention_days: int, batch: int,
          now: datetime.datetime | None = None) -> int:
    """Delete what is no longer kept, at most ``batch`` rows.

    A node keeps its newest ``max_entries`` entries, and any younger than
    ``minimum_days``; an event of no node (allocations, leases, deleted
    nodes) is kept ``retention_days``.

    :returns: how many rows were deleted.
    """
    now = now or base.utcnow()
    kept_since = now - datetime.timedelta(days=minimum_days)
    # The scans first, in a read transaction: on SQLite a write
    # transaction stops every other writer, and counting the entries of
    # every node reads the whole index.
    with db.reader() as conn:
        # The newest event always stays: SQLite would give its id again
        # to the next one, which a follower past it would never see.
        newest = conn.execute(_NEWEST).scalar()
        crowded = conn.execute(
            sa.select(TABLE.c.node_id).where(TABLE.c.node_id.is_not(None))
            .group_by(TABLE.c.node_id)
            .having(sa.func.count() > max_entries)).scalars().all()
    if newest is None:
        return 0
    # Then short write transactions, one per node, for the same reason.
    with db.writer() as conn:
        deleted = _delete(conn, sa.select(TABLE.c.id).where(
            TABLE.c.id < newest, TABLE.c.node_id.is_(None),
            TABLE.c.created_at < now - datetime.timedelta(
                days=retention_days)).order_by(TABLE.c.id).limit(batch))
    for node_id in crowded:
        if deleted >= batch:
            break
        with db.writer() as conn:
            newest_dropped = conn.execute(
                sa.select(TABLE.c.id).where(TABLE.c.node_id == node_id)
                .order_by(TABLE.c.id.desc()).offset(max_entries).limit(1)
            ).scalar()
            if newest_dropped is None:
                continue  # pruned meanwhile by another conductor
            deleted += _delete(conn, sa.select(TABLE.c.id).where(
                TABLE.c.node_id == node_id, TABLE.c.id <= newest_dropped,
                TABLE.c.id < newest,
                TABLE.c.created_at < kept_since).order_by(TABLE.c.id)
                .limit(batch - deleted))
    return deleted


def _delete(conn: sa.Connection, ids: sa.Select[Any]) -> int:
    # The ids first: MySQL refuses a DELETE whose subquery reads the
    # table it deletes from.
    found = conn.execute(ids).scalars().all()
    if not found:
        return 0
    return int(conn.execute(sa.delete(TABLE).where(
        TABLE.c.id.in_(found))).rowcount)


# ---- allocation and lease events -------------------------------------------

ALLOCATION = 'allocation'
LEASE = 'lease'


def allocation_entry(allocation: Mapping[str, Any], what: str,
                     severity: str = INFO, node_uuid: str | None = None
                     ) -> dict[str, Any]:
    """An allocation's event: ``what`` happened to it (``created``,
    ``active``, ``failed: <error>``); its owner may read it."""
    return entry(ALLOCATION, 'Allocation %s %s' % (allocation['uuid'], what),
                 severity, allocation_uuid=allocation['uuid'],
                 owner=allocation.get('owner'), node_uuid=node_uuid,
                 state=allocation.get('state'))


#: The lease event of each status a lease moves to.
LEASE_EVENTS = {'starting': 'starting', 'active': 'started',
                'error': 'failed', 'ending': 'ending', 'ended': 'ended',
                'cancelled': 'cancelled'}


def lease_entry(lease: Mapping[str, Any], what: str, status: str,
                error: str | None = None) -> dict[str, Any]:
    """A lease's event (``created``, ``started``, ``ending soon``,
    ``ended``, ``failed``...); its project and its owner may read it."""
    text = 'Lease %s %s' % (lease['uuid'], what)
    if error:
        text += ': %s' % error
    return entry(LEASE, text, ERROR if error else INFO,
                 lease_uuid=lease['uuid'], lessee=lease.get('project'),
                 owner=lease.get('owner'), state=status)
