# SPDX-License-Identifier: Apache-2.0
"""The conductor's sushy connections to Redfish BMCs, one per BMC and
credentials, kept and reused (part of :mod:`ferrum.drivers.redfish.client`,
the package that talks to sushy; its docstring has the rules).
"""

import collections
import contextlib
import hashlib
import hmac
import logging
import secrets
import threading
from collections.abc import Iterator
from concurrent import futures
from typing import Any

import futurist
import requests
import sushy
from oslo_config import cfg
from sushy import auth as sushy_auth
from sushy import connector as sushy_connector
from sushy import exceptions as sushy_exc

from ferrum.drivers.redfish import driver_info
from ferrum.drivers.redfish import errors

LOG = logging.getLogger(__name__)

_Key = tuple[str, str, str, bool | str, str]

#: The key of this process's password digests: a digest in the cache key
#: (visible in a debugger or a dump) cannot be compared with a list of
#: precomputed ones, nor with another process's.
_DIGEST_KEY = secrets.token_bytes(32)
#: What a failed request raises, under sushy or from it.
FAILURES = (sushy_exc.SushyError, requests.RequestException, OSError)
#: Logouts at once when the cache is cleared: a few threads for a short
#: while at stop, each waiting on one BMC.
_LOGOUTS = 16


def reason(exc: BaseException) -> str:
    """A sushy or requests failure in one line (URLs, never a password)."""
    text = getattr(exc, 'detail', None) or str(exc) or type(exc).__name__
    return ' '.join(str(text).split())[:300]


def cache_key(params: driver_info.RedfishParams) -> _Key:
    digest = hmac.new(_DIGEST_KEY, params.password.encode(),
                      hashlib.sha256).hexdigest()
    return (params.address, params.username, digest, params.verify_ca,
            params.auth_type)


def _auth(params: driver_info.RedfishParams, kind: str) -> Any:
    kinds = {'basic': sushy_auth.BasicAuth, 'session': sushy_auth.SessionAuth,
             # Falls back to HTTP Basic when there is no SessionService.
             'auto': sushy_auth.SessionOrBasicAuth}
    return kinds[kind](username=params.username or None,
                       password=params.password or None)


class Connection:
    """One sushy connection to a BMC, what it learnt, and who uses it.

    :ivar root: the ``sushy.Sushy`` service root.
    :ivar default_system: the path of the BMC's one System, once listed
        for a node without ``redfish_system_id``.
    """

    def __init__(self, root: Any, auth: Any, connector: Any) -> None:
        self.root = root
        self.default_system: str | None = None
        self._auth = auth
        self._connector = connector
        self.users = 0
        self.dropped = False
        self.logout = False

    def close(self, logout: bool) -> None:
        """Close the HTTP session; with ``logout``, end the Redfish
        session at the BMC first (a BMC that failed is not asked: its
        session is gone or it would not answer)."""
        try:
            if logout:
                self._auth.close()  # DELETE of the session; basic: nothing
            elif hasattr(self._auth, 'reset_session_attrs'):
                # Forget the session without asking, so that sushy's own
                # clean-up (when the object is collected) asks nothing.
                self._auth.reset_session_attrs()
        except FAILURES as exc:
            LOG.debug('Closing a Redfish session failed: %s', reason(exc))
        finally:
            self._connector.close()


def _connect(conf: cfg.ConfigOpts, params: driver_info.RedfishParams,
             auth: Any) -> Connection:
    """A sushy connection: reads the service root, then logs in."""
    options = conf.redfish
    # Our own connector, so that it can be closed when the connection is
    # dropped (sushy closes nothing itself).
    connector = sushy_connector.Connector(
        params.address, verify=params.verify_ca,
        server_side_retries=options.server_side_retries,
        server_side_retries_delay=options.server_side_retries_delay,
        default_request_timeout=options.request_timeout,
        connect_timeout=options.connect_timeout)
    try:
        root = sushy.Sushy(params.address, auth=auth, connector=connector)
    except BaseException:
        connector.close()
        raise
    return Connection(root, auth, connector)


def _has_sessions(conf: cfg.ConfigOpts,
                  params: driver_info.RedfishParams) -> bool:
    """Whether the service root links a SessionService (the root is
    readable without credentials). True when that cannot be told."""
    try:
        anonymous = _connect(conf, params, sushy_auth.BasicAuth())
    except FAILURES:
        return True
    try:
        return 'SessionService' in (anonymous.root.json or {})
    finally:
        anonymous.close(logout=False)


def _open(conf: cfg.ConfigOpts,
          params: driver_info.RedfishParams) -> Connection:
    """A connection with the node's auth type."""
    if params.auth_type == 'auto':
        basic = _connect(conf, params, _auth(params, 'basic'))
        if 'SessionService' not in (basic.root.json or {}):
            # No sessions to try: sushy's "auto" would still try a login
            # and log its refusal at ERROR, "check credentials", for
            # credentials that work.
            return basic
        basic.close(logout=False)
    try:
        return _connect(conf, params, _auth(params, params.auth_type))
    except sushy_exc.AccessError:
        if params.auth_type == 'session' and not _has_sessions(conf, params):
            raise errors.RedfishUnsupported(
                address=params.address, action='Redfish sessions',
                reason='it has no SessionService; set driver_info '
                       'redfish_auth_type to basic or auto') from None
        raise


class Connections:
    """Open sushy connections, least recently used first, bounded.

    A connection is borrowed for one call (:meth:`using`). One dropped
    (evicted beyond ``[redfish] connection_cache_size``, or broken) is
    closed as soon as its last borrower is done, by that thread: not by
    the garbage collector, at some later time, on whichever thread it
    runs. Only one thread connects to a BMC at a time: the others wait
    for its connection (or its failure) instead of each logging in.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._open: collections.OrderedDict[_Key, Connection] = (
            collections.OrderedDict())
        self._opening: dict[_Key, futures.Future[Connection]] = {}

    @contextlib.contextmanager
    def using(self, conf: cfg.ConfigOpts,
              params: driver_info.RedfishParams) -> Iterator[Connection]:
        """The BMC's connection, made if needed, for the ``with`` body."""
        conn = self._borrow(conf, params)
        try:
            yield conn
        finally:
            self._give_back(conn)

    def _borrow(self, conf: cfg.ConfigOpts,
                params: driver_info.RedfishParams) -> Connection:
        key = cache_key(params)
        while True:
            with self._lock:
                conn = self._open.get(key)
                if conn is not None:
                    self._open.move_to_end(key)
                    conn.users += 1
                    return conn
                pending = self._opening.get(key)
                mine = pending is None
                if pending is None:
                    pending = self._opening[key] = futures.Future()
            if not mine:
                LOG.debug('Waiting for the connection to BMC %s that '
                          'another call is making', params.address)
                pending.result()  # raises the opener's failure
                continue  # now cached (unless dropped already): again
            return self._connect(conf, params, key, pending)

    def _connect(self, conf: cfg.ConfigOpts,
                 params: driver_info.RedfishParams, key: _Key,
                 pending: 'futures.Future[Connection]') -> Connection:
        # Outside the lock: connecting is I/O, and other BMCs must not wait.
        try:
            conn = _open(conf, params)
        except BaseException as exc:
            with self._lock:
                del self._opening[key]
            pending.set_exception(exc)
            raise
        evicted = []
        with self._lock:
            del self._opening[key]
            conn.users = 1
            self._open[key] = conn
            while len(self._open) > conf.redfish.connection_cache_size:
                _old, old = self._open.popitem(last=False)
                if self._retire(old, logout=True):
                    evicted.append(old)
        pending.set_result(conn)
        for old in evicted:
            old.close(logout=True)
        return conn

    def _retire(self, conn: Connection, logout: bool) -> bool:
        """Mark ``conn`` dropped (under the lock); True when nobody uses
        it, so that the caller closes it now, outside the lock."""
        conn.dropped, conn.logout = True, logout
        return conn.users == 0

    def _give_back(self, conn: Connection) -> None:
        with self._lock:
            conn.users -= 1
            last = conn.dropped and conn.users == 0
        if last:
            conn.close(logout=conn.logout)

    def drop(self, params: driver_info.RedfishParams,
             conn: Connection) -> None:
        """Forget ``conn``, broken (its BMC failed or refused it): the next
        call connects afresh. Closed once its borrowers are done."""
        key = cache_key(params)
        with self._lock:
            if self._open.get(key) is conn:
                del self._open[key]
            close = not conn.dropped and self._retire(conn, logout=False)
        if close:
            conn.close(logout=False)

    def clear(self) -> None:
        """Drop every connection, logging out of each unused one.

        The logouts run side by side (at most :data:`_LOGOUTS` at once):
        a stopping conductor waits about one request timeout for every 16
        BMCs that do not answer, not one each. A logout's failure is
        logged; none is raised.
        """
        with self._lock:
            idle = [conn for conn in self._open.values()
                    if self._retire(conn, logout=True)]
            self._open.clear()
        submitted = 0
        if len(idle) > 1:
            try:
                with futurist.ThreadPoolExecutor(
                        max_workers=min(len(idle), _LOGOUTS)) as pool:
                    for conn in idle:
                        pool.submit(_log_out, conn)
                        submitted += 1
            except RuntimeError as exc:
                # No thread to be had (at interpreter exit, or at a limit):
                # the rest one after another rather than not at all.
                LOG.debug('Logging out of the BMCs one by one: %s', exc)
        for conn in idle[submitted:]:
            _log_out(conn)

    def __len__(self) -> int:
        with self._lock:
            return len(self._open)


def _log_out(conn: Connection) -> None:
    try:
        conn.close(logout=True)
    except Exception:  # noqa: BLE001 - one BMC's failure; the others go on
        LOG.exception('Closing a Redfish connection failed')


#: The conductor's connections: one process, one cache.
CONNECTIONS = Connections()
