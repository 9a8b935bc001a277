# SPDX-License-Identifier: Apache-2.0
"""pytest plugin: a throwaway PostgreSQL server for the database tests.

Why a real server rather than mocks or SQLite only: what the database tests
check is exactly what a stand-in gets wrong. Alembic migrations are DDL that
SQLite accepts and PostgreSQL may reject (or the other way round), schema
reflection and type comparison differ per dialect, and constraints such as
``uniq_nodes0uuid`` are only worth something if the real engine enforces
them and oslo.db turns the driver's error into ``DBDuplicateEntry``. A mock
would only echo our own assumptions back.

The cluster is private to one pytest session: ``initdb`` into a fresh
temporary directory, started with ``pg_ctl`` on 127.0.0.1 with a free TCP
port and its own unix-socket directory (so it never collides with a system
cluster or with a previous run), ``fsync=off`` because its data is thrown
away anyway, and trust authentication because only this session talks to
it. It is stopped and deleted when the session ends. Each test gets its own
empty database, so tests cannot see each other's rows or schema.

Fixtures:

``postgresql_server`` (session)
    The running :class:`PostgresServer`.
``pg_url`` (function)
    URL of a new, empty database, dropped after the test.
``pg_db`` (function)
    A :class:`ferrum.db.api.Database` on ``pg_url``, migrated to head.

When the PostgreSQL binaries are missing the fixtures skip the test, or fail
it under ``FERRUM_REQUIRE_REAL=1`` (see ``tests.real.require_real``).
``FERRUM_PG_BINDIR`` selects a specific ``bin`` directory.
"""

from __future__ import annotations

import atexit
import dataclasses
import glob
import os
import pwd
import re
import shlex
import shutil
import stat
import subprocess
import tempfile
import time
import uuid
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

import pytest

from tests import process
from tests.real import require_real

if TYPE_CHECKING:
    from oslo_config import cfg

    from ferrum.db import api as db_api

_SUPERUSER = 'postgres'
_HOST = '127.0.0.1'
# Generous: a cold start on a loaded CI machine can take several seconds.
_START_TIMEOUT = 60.0
_STOP_TIMEOUT = 30
_START_ATTEMPTS = 3
# Unix socket paths are limited to ~107 bytes, and the temp parent gets
# "/ferrum-pg-XXXXXXXX/s/.s.PGSQL.NNNNN" (36 bytes) appended.
_MAX_TMP_PARENT = 60
_TOOLS = ('initdb', 'pg_ctl', 'postgres')


class PostgresError(RuntimeError):
    """The throwaway cluster could not be created, started or stopped."""


def find_bindir() -> str | None:
    """The directory holding initdb, pg_ctl and postgres, or None.

    ``FERRUM_PG_BINDIR`` if set (and only it); else the newest Debian or
    Ubuntu version under ``/usr/lib/postgresql``; then ``$PATH`` (Fedora,
    Homebrew).
    """
    override = os.environ.get('FERRUM_PG_BINDIR')
    candidates: list[str] = [override] if override else []

    def version_key(path: str) -> tuple[int, ...]:
        parts = os.path.basename(os.path.dirname(path)).split('.')
        return tuple(int(p) if p.isdigit() else -1 for p in parts)

    if not override:  # an explicit choice is not silently replaced
        candidates.extend(sorted(glob.glob('/usr/lib/postgresql/*/bin'),
                                 key=version_key, reverse=True))
        initdb = shutil.which('initdb')
        if initdb:
            candidates.append(os.path.dirname(initdb))
    for bindir in candidates:
        if all(os.access(os.path.join(bindir, tool), os.X_OK)
               for tool in _TOOLS):
            return bindir
    return None


def _world_traversable(path: str) -> bool:
    path = os.path.abspath(path)
    while True:
        if not os.stat(path).st_mode & stat.S_IXOTH:
            return False
        parent = os.path.dirname(path)
        if parent == path:
            return True
        path = parent


@dataclasses.dataclass
class PostgresServer:
    """One throwaway PostgreSQL cluster, owned by this process.

    ``run_as`` is the (uid, gid) the server runs as, or None to run as the
    current user: PostgreSQL refuses to run as root, so under root the
    Debian ``postgres`` system user runs it.
    """

    bindir: str
    base_dir: str
    run_as: tuple[int, int] | None = None
    port: int = 0
    user: str = _SUPERUSER
    host: str = _HOST

    @property
    def data_dir(self) -> str:
        return os.path.join(self.base_dir, 'data')

    @property
    def socket_dir(self) -> str:
        return os.path.join(self.base_dir, 's')

    @property
    def log_file(self) -> str:
        return os.path.join(self.base_dir, 'postgres.log')

    @property
    def pid_file(self) -> str:
        return os.path.join(self.data_dir, 'postmaster.pid')

    # -- lifecycle -------------------------------------------------------

    @classmethod
    def create(cls, bindir: str, run_as: tuple[int, int] | None
               ) -> PostgresServer:
        """Make a private directory tree and ``initdb`` a cluster in it."""
        parent = tempfile.gettempdir()
        if (run_as is not None and not _world_traversable(parent)) or (
                len(parent) > _MAX_TMP_PARENT):
            parent = '/tmp'
        base_dir = tempfile.mkdtemp(prefix='ferrum-pg-', dir=parent)
        server = cls(bindir=bindir, base_dir=base_dir, run_as=run_as)
        try:
            os.mkdir(server.socket_dir, 0o700)
            if run_as is not None:
                for path in (base_dir, server.socket_dir):
                    os.chown(path, *run_as)
            server._initdb()
        except BaseException:
            server.remove()
            raise
        return server

    def _run(self, args: list[str], timeout: float
             ) -> subprocess.CompletedProcess[str]:
        kwargs: dict[str, Any] = {}
        if self.run_as is not None:
            kwargs.update(user=self.run_as[0], group=self.run_as[1],
                          extra_groups=[])
        env = {k: v for k, v in os.environ.items() if not k.startswith('PG')}
        env.update(LC_ALL='C', LANG='C')
        return subprocess.run(
            args, cwd=self.base_dir, env=env, capture_output=True, text=True,
            stdin=subprocess.DEVNULL, timeout=timeout, check=False, **kwargs)

    def _tool(self, name: str) -> str:
        return os.path.join(self.bindir, name)

    def _initdb(self) -> None:
        args = [self._tool('initdb'), '--pgdata', self.data_dir,
                '--username', self.user, '--auth', 'trust',
                '--encoding', 'UTF8', '--locale', 'C', '--no-sync']
        try:
            result = self._run(args, timeout=120)
        except subprocess.TimeoutExpired as exc:
            raise PostgresError('initdb timed out: %s\n%s' % (
                shlex.join(args), exc.output or '')) from exc
        if result.returncode != 0:
            raise PostgresError(
                'initdb failed (exit %d): %s\n--- stdout ---\n%s\n'
                '--- stderr ---\n%s' % (result.returncode, shlex.join(args),
                                        result.stdout, result.stderr))
        # Appending keeps the file's owner and mode (the server's user).
        with open(os.path.join(self.data_dir, 'postgresql.conf'), 'a') as f:
            f.write('\n# ferrum test cluster\n'
                    "listen_addresses = '%s'\n"
                    "unix_socket_directories = '%s'\n"
                    'fsync = off\n'
                    'synchronous_commit = off\n'
                    'full_page_writes = off\n'
                    'max_connections = 200\n'
                    % (self.host, self.socket_dir))

    def start(self) -> None:
        """Start the postmaster on a free port and wait until it answers."""
        for attempt in range(1, _START_ATTEMPTS + 1):
            self.port = process.free_port(_HOST)
            try:
                self._start_once()
                return
            except PostgresError:
                # Lost the race for the port: pick another one.
                if (attempt < _START_ATTEMPTS
                        and 'already in use' in self.log_tail()):
                    self._truncate_log()
                    continue
                raise

    def _start_once(self) -> None:
        args = [self._tool('pg_ctl'), 'start', '--pgdata', self.data_dir,
                '--log', self.log_file, '--options', '-p %d' % self.port,
                # pg_ctl knows the postmaster's pid, so it notices at once
                # when the server dies during start-up (bad port, bad
                # config); our own poll below then checks TCP from outside.
                '--wait', '--timeout', '%d' % _START_TIMEOUT]
        try:
            result = self._run(args, timeout=_START_TIMEOUT + 10)
        except subprocess.TimeoutExpired as exc:
            raise PostgresError('pg_ctl start timed out: %s\n--- log ---\n%s'
                                % (shlex.join(args), self.log_tail())) from exc
        if result.returncode != 0:
            raise PostgresError(
                'pg_ctl start failed (exit %d): %s\n%s%s\n--- log ---\n%s'
                % (result.returncode, shlex.join(args), result.stdout,
                   result.stderr, self.log_tail()))
        self._wait_ready()

    def _wait_ready(self) -> None:
        """Poll until a TCP connection succeeds, the server dies, or time up.

        ``pg_ctl --wait`` has already seen the postmaster report "ready";
        this checks what the tests need from the outside: a client can
        connect over TCP to 127.0.0.1 and run a query. Refused connections
        are retried until the deadline, a dead postmaster fails at once.
        """
        import psycopg2

        deadline = time.monotonic() + _START_TIMEOUT
        interval = 0.005
        last_error: Exception | None = None
        while True:
            try:
                conn = psycopg2.connect(
                    host=self.host, port=self.port, user=self.user,
                    dbname='postgres', connect_timeout=5)
            except psycopg2.OperationalError as exc:
                last_error = exc
            else:
                try:
                    with conn.cursor() as cur:
                        cur.execute('SELECT 1')
                finally:
                    conn.close()
                return
            pid = self.postmaster_pid()
            if pid is None or not _alive(pid):
                raise PostgresError(
                    'PostgreSQL exited while starting on port %d\n'
                    '--- log ---\n%s' % (self.port, self.log_tail()))
            if time.monotonic() > deadline:
                raise PostgresError(
                    'PostgreSQL did not accept connections on %s:%d within '
                    '%.0fs (last error: %s)\n--- log ---\n%s'
                    % (self.host, self.port, _START_TIMEOUT, last_error,
                       self.log_tail()))
            time.sleep(interval)
            interval = min(interval * 2, 0.1)

    def postmaster_pid(self) -> int | None:
        """The postmaster's pid from its pid file, or None if not running."""
        try:
            with open(self.pid_file) as f:
                return int(f.readline().strip())
        except (OSError, ValueError):
            return None

    def stop(self) -> None:
        """Stop the server (fast, then immediate shutdown). Idempotent."""
        for mode in ('fast', 'immediate'):
            if self.postmaster_pid() is None:
                return
            try:
                self._run([self._tool('pg_ctl'), 'stop', '--pgdata',
                           self.data_dir, '--mode', mode, '--wait',
                           '--timeout', str(_STOP_TIMEOUT)],
                          timeout=_STOP_TIMEOUT + 10)
            except subprocess.TimeoutExpired:
                pass
        pid = self.postmaster_pid()
        if pid is not None and _alive(pid):
            # No SIGKILL: the pid file could be stale and the pid reused.
            raise PostgresError(
                'PostgreSQL (pid %d) did not stop\n--- log ---\n%s'
                % (pid, self.log_tail()))

    def start_again(self) -> None:
        """Start a stopped server on the port it had, so that the URLs
        clients hold stay valid (for outage tests)."""
        self._start_once()

    def remove(self) -> None:
        """Delete the cluster's directory tree."""
        if os.path.isdir(self.base_dir):
            shutil.rmtree(self.base_dir)

    def close(self) -> None:
        try:
            self.stop()
        finally:
            self.remove()

    # -- helpers for the fixtures ---------------------------------------

    def log_tail(self, lines: int = 50) -> str:
        try:
            with open(self.log_file, errors='replace') as f:
                return ''.join(f.readlines()[-lines:])
        except OSError:
            return '(no log)'

    def _truncate_log(self) -> None:
        try:
            with open(self.log_file, 'w'):
                pass
        except OSError:
            pass

    def url(self, dbname: str) -> str:
        """SQLAlchemy URL of database ``dbname`` on this server."""
        return 'postgresql+psycopg2://%s@%s:%d/%s' % (
            self.user, self.host, self.port, dbname)

    def admin_connection(self) -> Any:
        """An autocommit psycopg2 connection to the maintenance database."""
        import psycopg2

        conn = psycopg2.connect(host=self.host, port=self.port,
                                user=self.user, dbname='postgres',
                                connect_timeout=10)
        conn.autocommit = True  # CREATE/DROP DATABASE refuse transactions
        return conn

    def create_database(self, dbname: str, template: str | None = None
                        ) -> None:
        """Create ``dbname``, empty or a copy of database ``template``
        (which nobody may be connected to meanwhile)."""
        _check_identifier(dbname)
        copy = ''
        if template is not None:
            _check_identifier(template)
            copy = ' TEMPLATE "%s"' % template
        conn = self.admin_connection()
        try:
            with conn.cursor() as cur:
                cur.execute('CREATE DATABASE "%s"%s' % (dbname, copy))
        finally:
            conn.close()

    def drop_database(self, dbname: str) -> None:
        """Drop ``dbname`` even if a leaked connection still uses it."""
        _check_identifier(dbname)
        conn = self.admin_connection()
        try:
            with conn.cursor() as cur:
                if conn.server_version >= 130000:
                    cur.execute('DROP DATABASE IF EXISTS "%s" WITH (FORCE)'
                                % dbname)
                else:
                    cur.execute('SELECT pg_terminate_backend(pid) '
                                'FROM pg_stat_activity WHERE datname = %s',
                                (dbname,))
                    cur.execute('DROP DATABASE IF EXISTS "%s"' % dbname)
        finally:
            conn.close()


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _check_identifier(name: str) -> None:
    if not re.fullmatch(r'[a-z_][a-z0-9_]{0,62}', name):
        raise ValueError('unsafe database name %r' % name)


def _run_as() -> tuple[int, int] | None:
    """Who runs the server: None for the current user, unless root."""
    if os.geteuid() != 0:
        return None
    try:
        entry = pwd.getpwnam('postgres')
    except KeyError:
        return None
    return entry.pw_uid, entry.pw_gid


@pytest.fixture(scope='session')
def postgresql_server() -> Iterator[PostgresServer]:
    """A PostgreSQL cluster for the whole session, deleted at its end."""
    yield from _cluster()


@pytest.fixture(scope='module')
def own_postgresql_server() -> Iterator[PostgresServer]:
    """A cluster of the module's own, which its tests may stop and start
    without disturbing the session's other users."""
    yield from _cluster()


def _cluster() -> Iterator[PostgresServer]:
    bindir = find_bindir()
    if bindir is None:
        require_real('PostgreSQL')
    try:
        import psycopg2  # noqa: F401
    except ImportError:
        require_real('psycopg2')
    run_as = _run_as()
    if os.geteuid() == 0 and run_as is None:
        require_real('PostgreSQL (a non-root "postgres" user to run it as)')

    server = PostgresServer.create(bindir, run_as)
    # Session teardown normally cleans up; atexit covers an aborted run.
    atexit.register(server.close)
    try:
        server.start()
        yield server
    finally:
        atexit.unregister(server.close)
        server.close()


@pytest.fixture
def pg_url(postgresql_server: PostgresServer) -> Iterator[str]:
    """A fresh, empty database of its own for one test; dropped after it."""
    dbname = 'ferrum_test_%s' % uuid.uuid4().hex[:16]
    postgresql_server.create_database(dbname)
    try:
        yield postgresql_server.url(dbname)
    finally:
        postgresql_server.drop_database(dbname)


@pytest.fixture(scope='session')
def pg_schema(postgresql_server: PostgresServer) -> str:
    """The name of a database at ferrum's newest schema, migrated once per
    session: :func:`pg_db` copies it (the migrations cost about as much as
    a short test; a copy, a fraction)."""
    from ferrum import conf as conf_mod
    from ferrum.db import api as db_api
    from ferrum.db import migration

    dbname = 'ferrum_schema_%s' % uuid.uuid4().hex[:12]
    postgresql_server.create_database(dbname)
    database = db_api.Database(conf_mod.new_conf(),
                               url=postgresql_server.url(dbname))
    try:
        migration.upgrade(database.engine)
    finally:
        database.dispose()  # a template has no connections
    return dbname


@pytest.fixture
def pg_db(conf: cfg.ConfigOpts, postgresql_server: PostgresServer,
          pg_schema: str) -> Iterator[db_api.Database]:
    """A ferrum Database on a fresh PostgreSQL database at the newest
    schema (a copy of :func:`pg_schema`); dropped after the test."""
    from ferrum.db import api as db_api

    dbname = 'ferrum_test_%s' % uuid.uuid4().hex[:16]
    postgresql_server.create_database(dbname, template=pg_schema)
    database = db_api.Database(conf, url=postgresql_server.url(dbname))
    try:
        yield database
    finally:
        database.dispose()
        postgresql_server.drop_database(dbname)
