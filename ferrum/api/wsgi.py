# SPDX-License-Identifier: Apache-2.0
"""``application``: the API for any WSGI server.

Point the server at ``ferrum.api.wsgi:application``. Importing this
module reads nothing. The first request builds the application, once,
even when several arrive together: the configuration comes from the file
named by the ``FERRUM_CONFIG_FILE`` environment variable when it is set,
otherwise from oslo.config's default search (``~/.ferrum/ferrum.conf``,
``/etc/ferrum/ferrum.conf`` and so on).

On the ``local`` transport (the default) the application runs its
conductor in the same process (see :mod:`ferrum.api.local`), stopped
gracefully when the interpreter exits: run a single server process (as
many threads as you like) then. With ``[DEFAULT] rpc_transport = json-rpc``
it runs no conductor and calls ``ferrum-conductor`` processes (see
:mod:`ferrum.api.remote`), so any number of server processes may run it.
Either way, upgrade the schema with ``ferrum-dbsync upgrade`` first,
since this module does not. The WSGI server, not ferrum, chooses the
address here, so ferrum cannot refuse a public one with ``noauth``: set
``[DEFAULT] auth_strategy = http_basic`` unless it listens on loopback.
"""

import atexit
import logging
import os
import threading
from collections.abc import Callable, Iterable
from typing import Any

from ferrum import conf as ferrum_conf
from ferrum.api import local
from ferrum.api import remote
from ferrum.common import exception

LOG = logging.getLogger(__name__)

CONFIG_FILE_ENV = 'FERRUM_CONFIG_FILE'

WSGIApp = Callable[[dict[str, Any], Callable[..., Any]], Iterable[bytes]]


class LazyApplication:
    """A WSGI application that builds the real one on its first call."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._app: WSGIApp | None = None
        self._backend: local.LocalAPI | remote.RemoteAPI | None = None

    def __call__(self, environ: dict[str, Any],
                 start_response: Callable[..., Any]) -> Iterable[bytes]:
        app = self._app or self._build()
        return app(environ, start_response)

    def _build(self) -> WSGIApp:
        with self._lock:
            if self._app is not None:
                return self._app
            path = os.environ.get(CONFIG_FILE_ENV)
            # No command-line arguments: sys.argv belongs to the server.
            conf = ferrum_conf.load_for_program(
                [], [path] if path else None)
            backend = remote.backend(conf)
            try:
                app: WSGIApp = backend.start()
            except exception.FerrumException as exc:
                # Retried on the next request; the server answers this one
                # with its own 500.
                LOG.error('The ferrum API cannot start: %s', exc)
                raise
            atexit.register(backend.stop)
            self._backend, self._app = backend, app
            return app

    def close(self) -> None:
        """Stop the conductor; the next call builds everything again."""
        with self._lock:
            if self._backend is not None:
                atexit.unregister(self._backend.stop)
                self._backend.stop()
            self._backend = self._app = None


application = LazyApplication()
