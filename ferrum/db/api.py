# SPDX-License-Identifier: Apache-2.0
"""Database access: one engine per process and reader/writer transactions.

The engine comes from oslo.db (connection retries, pool settings, and its
exception filters, which turn driver errors into ``DBDuplicateEntry`` and
``DBDeadlock``). Objects run SQLAlchemy Core statements on the connection
that :meth:`Database.writer` or :meth:`Database.reader` yields.

SQLite is the embedded default. It runs in WAL mode with a busy timeout, and
a write transaction starts with ``BEGIN IMMEDIATE``: the write lock is taken
up front, so a second writer waits for it (up to the busy timeout) instead of
failing with "database is locked" when its read lock cannot be upgraded.
Within one process, SQLite writers also queue on a Python lock before
``BEGIN IMMEDIATE``. The database still arbitrates (other processes wait
through the busy timeout); the lock only spares in-process writers
SQLite's busy handler, which polls with sleeps of several milliseconds and
cut throughput by half under the conductor's many worker threads.

oslo.db's SQLite set-up always emits a plain ``BEGIN`` and opens a new
connection per transaction (NullPool), so ferrum builds the SQLite engine
itself, pooled, and only borrows oslo.db's exception filters for it. For the
same reason ferrum wraps engines itself rather than using enginefacade.
"""

import contextlib
import os
import re
import sqlite3
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

import sqlalchemy as sa
from oslo_config import cfg
from oslo_db import exception as db_exc
from oslo_db.sqlalchemy import engines
from oslo_db.sqlalchemy import exc_filters

from ferrum.common import exception
from ferrum.conf import allocation as allocation_conf
from ferrum.conf import placement as placement_conf
from ferrum.db import disconnects

_WRITE = 'ferrum_write'

#: Seconds a pooled PostgreSQL or MySQL connection may sit idle before it is
#: pinged on checkout. oslo.db pings on every checkout, which is one more
#: round trip per transaction (a fifth of an allocation delete); a
#: connection used moments ago is almost surely alive, and should the
#: database go away meanwhile, the failed statement invalidates the whole
#: pool (SQLAlchemy's disconnect handling) and oslo.db reports
#: ``DBConnectionError``, which the API answers with 503.
PING_AFTER_IDLE_S = 10.0
_CHECKED_IN = 'ferrum_checked_in'


def connection_url(conf: cfg.ConfigOpts) -> str:
    """``[database]connection``, or SQLite under ``[DEFAULT]state_path``."""
    if conf.database.connection:
        return str(conf.database.connection)
    path = os.path.abspath(os.path.join(conf.state_path, 'ferrum.sqlite'))
    return 'sqlite:///%s' % path


class Database:
    """The engine of one process, with transaction helpers."""

    def __init__(self, conf: cfg.ConfigOpts, url: str | None = None,
                 create: bool = True) -> None:
        """:param create: create an SQLite database file (and its
            directory) that does not exist yet; tools that only read an
            existing database pass False.
        :raises DatabaseConfigInvalid: the URL cannot be used, or (without
            ``create``) names an SQLite file that does not exist.
        :raises DatabaseUnreachable: the server did not answer within
            ``[database] max_retries``.
        """
        self.url = url or connection_url(conf)
        with _start_errors(conf, self.url):
            self.engine = _engine(conf, self.url, create)
        # Bound values include driver_info, whose passwords must never
        # reach an error message, a log line or last_error.
        self.engine.hide_parameters = True
        self.is_sqlite = self.engine.dialect.name == 'sqlite'
        self._local = threading.local()
        self._write_lock = (threading.Lock() if self.is_sqlite
                            else contextlib.nullcontext())
        # An in-memory database is one shared connection: readers must
        # queue behind writers too.
        self._read_lock = (self._write_lock
                           if isinstance(self.engine.pool, sa.pool.StaticPool)
                           else contextlib.nullcontext())
        # Read at each write (queues_pushes, queues_releases), as
        # Ironic's objects read CONF: no program has to turn a queue on.
        self._conf = conf
        #: Whether node changes are recorded in their history
        #: (``[conductor] node_history``; see :mod:`ferrum.objects.event`).
        self.records_history = _records_history(conf)
        #: The event feed's bounds on PostgreSQL, in milliseconds
        #: (``[database] event_writer_timeout`` and ``event_feed_wait``; see
        #: :mod:`ferrum.objects.event`).
        self.event_writer_timeout_ms: int = (
            conf.database.event_writer_timeout * 1000)
        self.event_feed_wait_ms: int = conf.database.event_feed_wait
        #: The conductor named in the history entries this process
        #: records (set by the conductor service; None in an API).
        self.history_host: str | None = None

    @property
    def queues_pushes(self) -> bool:
        """Whether a write of a column a node's Placement provider depends
        on queues a push (``[placement]`` is configured;
        :mod:`ferrum.objects.placement_queue`)."""
        return _option(lambda: placement_conf.enabled(self._conf))

    @property
    def queues_releases(self) -> bool:
        """Whether deleting an allocation queues the release of its
        Placement consumer (``[allocation] backend = placement``, with
        ``[placement]``)."""
        return self.queues_pushes and _option(
            lambda: allocation_conf.through_placement(self._conf))

    @contextlib.contextmanager
    def writer(self) -> Iterator[sa.Connection]:
        """A write transaction: committed on success, rolled back on error.

        Nested use in one thread joins the outer transaction.
        """
        outer = getattr(self._local, 'conn', None)
        if outer is not None:
            yield outer
            return
        with _unavailable_as_503(), self._write_lock, \
                self.engine.connect() as conn:
            conn.execution_options(**{_WRITE: True})
            with conn.begin():
                self._local.conn = conn
                # Per transaction, on the thread (never on the pooled
                # connection, which outlives a rolled-back transaction).
                hooks: list[Callable[[sa.Connection], None]] = []
                self._local.hooks = hooks
                self._local.data = {}
                try:
                    yield conn
                    for hook in hooks:
                        hook(conn)
                finally:
                    self._local.conn = None
                    self._local.hooks = None
                    self._local.data = None

    def current_writer(self) -> sa.Connection | None:
        """The connection of the current thread's open write transaction,
        or None: for a hot path that only joins one (:meth:`writer`
        costs a generator and a context manager)."""
        conn: sa.Connection | None = getattr(self._local, 'conn', None)
        return conn

    def before_commit(self, hook: Callable[[sa.Connection], None]) -> None:
        """Run ``hook(conn)`` as the last work of the current thread's write
        transaction, once its block ended without an error (a rollback
        drops it). For work that must come after every other statement of
        the transaction: the event ids (:mod:`ferrum.objects.event`) take
        a row lock that must be the transaction's last, so that it is held
        only until the commit and never waited for while holding others.

        :raises RuntimeError: no write transaction is open on this thread.
        """
        hooks = getattr(self._local, 'hooks', None)
        if hooks is None:
            raise RuntimeError('before_commit needs an open writer()')
        hooks.append(hook)

    def transaction_data(self) -> dict[str, Any]:
        """A dict that lives as long as the current thread's write
        transaction (for work gathered until :meth:`before_commit`).

        :raises RuntimeError: no write transaction is open on this thread.
        """
        data: dict[str, Any] | None = getattr(self._local, 'data', None)
        if data is None:
            raise RuntimeError('transaction_data needs an open writer()')
        return data

    @contextlib.contextmanager
    def reader(self) -> Iterator[sa.Connection]:
        """A read-only transaction; nested use joins the enclosing one.

        Inside a writer it reads the writer's own transaction; inside a
        reader it shares that reader's snapshot, so a request that reads
        several tables sees one consistent state for one checkout.
        """
        outer = (getattr(self._local, 'conn', None)
                 or getattr(self._local, 'read_conn', None))
        if outer is not None:
            yield outer
            return
        with _unavailable_as_503(), self._read_lock, \
                self.engine.connect() as conn:
            with conn.begin():
                self._local.read_conn = conn
                try:
                    yield conn
                finally:
                    self._local.read_conn = None

    def dispose(self) -> None:
        self.engine.dispose()


def _option(read: Callable[[], bool]) -> bool:
    """An option's answer; False in a tool's configuration without its
    group."""
    try:
        return read()
    except cfg.NoSuchOptError:
        return False


def _records_history(conf: cfg.ConfigOpts) -> bool:
    try:
        return bool(conf.conductor.node_history)
    except cfg.NoSuchOptError:
        return True  # a tool's configuration without [conductor]


def _engine(conf: cfg.ConfigOpts, url: str, create: bool) -> sa.Engine:
    if url.startswith('sqlite:///'):
        path = url[len('sqlite:///'):]
        if not create and path != ':memory:' and not os.path.exists(path):
            raise exception.DatabaseConfigInvalid(
                url=url, reason='there is no such file. Give the config file '
                'of the service that uses it (--config-file), or create it '
                'with "ferrum-dbsync upgrade"')
        directory = os.path.dirname(path)
        if directory:
            os.makedirs(directory, exist_ok=True)
    if url.startswith('sqlite'):
        engine = _sqlite_engine(url, conf.database.sqlite_busy_timeout)
        disconnects.register(engine)
        return engine
    # oslo.db connects once here, retrying max_retries times while the
    # error is a DBConnectionError (see _engine_without_pre_ping).
    return engines.create_engine(  # type: ignore[no-any-return]
        url, _engine_target=_engine_without_pre_ping,
        max_pool_size=conf.database.max_pool_size,
        max_overflow=conf.database.max_overflow,
        pool_timeout=conf.database.pool_timeout,
        max_retries=conf.database.max_retries,
        retry_interval=conf.database.retry_interval,
        connection_recycle_time=conf.database.connection_recycle_time)


_EXTRA = 'install ferrum[postgresql] (pip install "ferrum[postgresql]")'
#: How to get a missing driver module, for the hint.
_DRIVER_FIXES = {
    'psycopg2': _EXTRA,
    # SQLAlchemy 2.1 made psycopg 3 the driver of a bare postgresql://.
    'psycopg': 'write postgresql+psycopg2:// and %s, or install psycopg'
               % _EXTRA,
}


@contextlib.contextmanager
def _start_errors(conf: cfg.ConfigOpts, url: str) -> Iterator[None]:
    """Opening the database at start: every way it fails is one message
    naming the database (password masked), the cause and the fix."""
    masked = masked_url(url)
    try:
        # Parsed first and on its own: make_url raises ValueError for a
        # port that is not a number, which elsewhere would be a bug.
        sa.engine.make_url(url)
    except ValueError as exc:
        raise exception.DatabaseConfigInvalid(
            url=masked, reason='its port is not a number (%s); write '
            'host:port with digits only, e.g. db:5432, or leave the port '
            'out for the default' % exc) from exc
    except sa.exc.ArgumentError:
        pass  # the same error again below, with the hint for it
    try:
        yield
    except sa.exc.ArgumentError as exc:
        raise exception.DatabaseConfigInvalid(
            url=masked, reason='[database] connection is not a URL '
            '(%s); write it as dialect+driver://user:password@host/name, '
            'e.g. postgresql+psycopg2://ferrum:secret@db/ferrum' % exc
        ) from exc
    except sa.exc.NoSuchModuleError as exc:
        raise exception.DatabaseConfigInvalid(
            url=masked, reason='SQLAlchemy has no such dialect or driver '
            '(%s); use postgresql+psycopg2://, mysql+pymysql:// or '
            'sqlite:///' % exc
        ) from exc
    except ImportError as exc:
        # The dialect imports its driver when the engine is made.
        fix = _DRIVER_FIXES.get(exc.name or '', (
            'install it, or name an installed driver in the URL '
            '(ferrum[postgresql] installs psycopg2, for '
            'postgresql+psycopg2://)'))
        raise exception.DatabaseConfigInvalid(
            url=masked, reason='its driver, the Python module %s, is not '
            'installed; %s' % (exc.name, fix)) from exc
    except db_exc.DBConnectionError as exc:
        raise exception.DatabaseUnreachable(
            url=masked, attempts=conf.database.max_retries,
            interval=conf.database.retry_interval,
            reason=_reason(exc)) from exc
    except OSError as exc:
        raise exception.DatabaseConfigInvalid(
            url=masked, reason='cannot create its directory (%s); check '
            '[DEFAULT] state_path or [database] connection' % exc) from exc


#: An unparseable URL's credentials: from the first ":" after the user
#: (after "//" if there is one) to the last "@", since a password may hold
#: ":", "/" and "@" while a user name and a host hold none of them.
_CREDENTIALS = re.compile(r'^((?:[^/]*//)?[^:/@]*):.*@', re.DOTALL)


def masked_url(url: str) -> str:
    """``url`` with its password, if any, replaced by ``***``."""
    try:
        return sa.engine.make_url(url).render_as_string(hide_password=True)
    except (sa.exc.ArgumentError, ValueError):
        # Not parseable (a port that is not a number raises ValueError).
        return _CREDENTIALS.sub(r'\1:***@', url)


@contextlib.contextmanager
def _unavailable_as_503() -> Iterator[None]:
    """A lost connection anywhere in a transaction (checkout, a statement,
    the commit) becomes the one exception every caller handles.

    By the time it is raised the transaction is rolled back and the pool
    invalidated (see :mod:`ferrum.db.disconnects`), so a retry after the
    database is back runs on a fresh connection.
    """
    try:
        yield
    except (db_exc.DBConnectionError, db_exc.DBNonExistentDatabase) as exc:
        # oslo.db calls SQLite's "unable to open database file" a missing
        # database: for a file that was there a moment ago, it is an outage.
        raise exception.DatabaseUnavailable(reason=_reason(exc)) from exc
    except sa.exc.DBAPIError as exc:
        if not exc.connection_invalidated:
            raise
        raise exception.DatabaseUnavailable(reason=_reason(exc)) from exc


def _reason(exc: Exception) -> str:
    """The driver's first line, without statement or parameters."""
    original = getattr(exc, 'inner_exception', None) or getattr(
        exc, 'orig', None) or exc
    original = getattr(original, 'orig', None) or original
    lines = str(original).strip().splitlines()
    return (lines[0] if lines else type(original).__name__)[:200]


def _engine_without_pre_ping(url: Any, **engine_args: Any
                             ) -> tuple[sa.Engine, sa.Engine]:
    """oslo.db's engine factory, with pings only after idleness.

    ``_engine_target`` is oslo.db's hook for building the engine; the rest
    of its set-up (pool options, event listeners, exception filters, the
    retried first connection) is kept.
    """
    engine_args['pool_pre_ping'] = False
    engine = sa.create_engine(url, **engine_args)
    # Before oslo.db's first, retried connection: its filter must see
    # libpq's "Connection refused" as a DBConnectionError to retry it.
    disconnects.register(engine)
    ping_idle_connections(engine, PING_AFTER_IDLE_S)
    return engine, engine


def ping_idle_connections(engine: sa.Engine, idle_s: float) -> None:
    """Ping a pooled connection at checkout once it idled ``idle_s``.

    A connection that does not answer is discarded and the pool hands out
    another (a ``DisconnectionError`` raised at checkout makes it retry).
    """
    @sa.event.listens_for(engine, 'checkin')
    def _on_checkin(_dbapi_conn: Any, record: Any) -> None:
        record.info[_CHECKED_IN] = time.monotonic()

    @sa.event.listens_for(engine, 'checkout')
    def _on_checkout(dbapi_conn: Any, record: Any, _proxy: Any) -> None:
        checked_in = record.info.get(_CHECKED_IN)
        if checked_in is None or time.monotonic() - checked_in < idle_s:
            return
        try:
            engine.dialect.do_ping(dbapi_conn)
        except Exception as exc:
            raise sa.exc.DisconnectionError(
                'pooled connection failed its ping: %s' % exc) from exc


def _sqlite_engine(url: str, busy_timeout_ms: int) -> sa.Engine:
    if url in ('sqlite://', 'sqlite:///:memory:'):
        # One shared connection, or every connection gets its own database.
        engine = sa.create_engine(
            url, poolclass=sa.pool.StaticPool,
            connect_args={'check_same_thread': False})
    else:
        engine = sa.create_engine(
            url, pool_size=5, max_overflow=20, pool_timeout=60,
            connect_args={'check_same_thread': False})
    exc_filters.register_engine(engine)
    @sa.event.listens_for(engine, 'connect')
    def _on_connect(dbapi_conn: Any, _record: Any) -> None:
        # Let SQLAlchemy, not pysqlite, decide when transactions begin.
        dbapi_conn.isolation_level = None
        cursor = dbapi_conn.cursor()
        cursor.execute('PRAGMA journal_mode=WAL')
        # In WAL mode NORMAL loses no committed data on a process crash,
        # only possibly the last transactions on power loss.
        cursor.execute('PRAGMA synchronous=NORMAL')
        cursor.execute('PRAGMA busy_timeout=%d' % busy_timeout_ms)
        cursor.execute('PRAGMA foreign_keys=ON')
        cursor.close()

    @sa.event.listens_for(engine, 'begin')
    def _on_begin(conn: sa.Connection) -> None:
        statement = ('BEGIN IMMEDIATE' if conn.get_execution_options().get(
            _WRITE) else 'BEGIN')
        # Straight to the driver, as the event insert is
        # (ferrum.objects.event): every transaction starts here, and
        # SQLAlchemy's execution context cost more than SQLite's BEGIN.
        # A BEGIN that fails starts nothing, so it is sent again through
        # SQLAlchemy, whose error is the one oslo.db translates (a lost
        # file, a lock another process held past the busy timeout).
        driver: Any = conn.connection.driver_connection
        try:
            driver.execute(statement)
        except sqlite3.Error:
            conn.exec_driver_sql(statement)

    return engine
