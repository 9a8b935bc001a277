# SPDX-License-Identifier: Apache-2.0
"""Telling a lost database connection from an ordinary SQL error.

SQLAlchemy's dialects and oslo.db's exception filters recognise some
connection failures, by message. Both miss current libpq's wording
("connection to server at ... failed: Connection refused", "the database
system is shutting down") and SQLite's "unable to open database file", so
such an error reached ferrum as a plain ``OperationalError`` and the API
answered 500. The rules here go by what the error *is* rather than by its
text where the driver says it:

- any DBAPI ``OperationalError`` or ``InterfaceError`` raised while a
  connection was being opened: nothing was executed, the server is away;
- a PostgreSQL error without a SQLSTATE (psycopg2 leaves ``pgcode`` unset
  for client-side failures: reset sockets, SSL EOF) or with a SQLSTATE of
  class 08 (connection exception) or 57P01-57P03 (the server shut down,
  crashed, or is starting);
- SQLite errors that mean the file cannot be used: it cannot be opened, an
  I/O error, a read-only file.

The listener only marks such errors as disconnects. SQLAlchemy then
invalidates the pool, so the next checkout reconnects, and oslo.db's filter
turns them into ``DBConnectionError``, which :mod:`ferrum.db.api` raises as
:class:`~ferrum.common.exception.DatabaseUnavailable`.
"""

from typing import Any

import sqlalchemy as sa
from oslo_db.sqlalchemy import exc_filters

#: SQLSTATEs of a server that went away or is not accepting connections.
_SERVER_GONE = frozenset({'57P01', '57P02', '57P03'})
#: SQLite messages meaning the database file is unusable right now.
_SQLITE_UNUSABLE = ('unable to open database file', 'disk i/o error',
                    'attempt to write a readonly database')


def is_connection_error(exc: BaseException, connecting: bool) -> bool:
    """Whether the DBAPI error ``exc`` means the database is unreachable.

    :param connecting: the error happened while opening a connection.
    """
    name = type(exc).__name__
    if name not in ('OperationalError', 'InterfaceError'):
        return False
    if connecting:
        return True
    module = type(exc).__module__ or ''
    if module.startswith('psycopg'):
        code = getattr(exc, 'pgcode', None) or getattr(exc, 'sqlstate', None)
        return code is None or code.startswith('08') or code in _SERVER_GONE
    if module.startswith('sqlite3'):
        text = str(exc).lower()
        return any(message in text for message in _SQLITE_UNUSABLE)
    return False


def register(engine: sa.Engine) -> None:
    """Mark connection failures as disconnects, before oslo.db's filters
    (which must see the mark) run."""
    def mark(context: Any) -> None:
        original = context.original_exception
        if context.is_disconnect or original is None:
            return
        connecting = context.connection is None or bool(
            getattr(context, 'is_pre_ping', False))
        if is_connection_error(original, connecting):
            context.is_disconnect = True

    # oslo.db registered its filter when the engine was built; the mark
    # must come first, and handle_error listeners run in the order added.
    oslo_filter = sa.event.contains(engine, 'handle_error',
                                    exc_filters.handler)
    if oslo_filter:
        sa.event.remove(engine, 'handle_error', exc_filters.handler)
    sa.event.listen(engine, 'handle_error', mark)
    if oslo_filter:
        sa.event.listen(engine, 'handle_error', exc_filters.handler,
                        retval=True)
