# SPDX-License-Identifier: Apache-2.0
"""The one module that talks to Redfish BMCs (through sushy).

Everything else in the ``redfish`` package calls :func:`call` with a
function of the node's sushy ``System`` and gets plain values back, or one
of :mod:`ferrum.drivers.redfish.errors`. Rules:

* One sushy connection per BMC address, user, password, TLS verification
  and auth type, kept and reused (:class:`Connections`): making one reads
  the service root and, for session auth, logs in, once however many
  calls want it at the same time. At most ``[redfish]
  connection_cache_size`` are kept; the least recently used is dropped. A
  connection whose BMC failed to answer or refused the credentials is
  dropped too, so the next call starts afresh (a restarted BMC forgets its
  sessions). A dropped connection is closed (and its session logged out,
  if its BMC is fine) when its last call ends, not by the garbage
  collector. Without ``redfish_system_id``, the one System's path is
  listed once per connection.
* Every request has a connect and a read timeout (``[redfish]
  connect_timeout``, ``request_timeout``), and 5xx answers are retried a
  bounded number of times, so a slow BMC never holds a conductor worker
  for long.
* sushy is imported here and nowhere else; its failures become ferrum
  exceptions here, each naming the ``driver_info`` field to fix (see
  :func:`_translate`). The password is never part of a message: sushy's
  messages hold URLs only.
"""

import collections
import contextlib
import dataclasses
import hashlib
import hmac
import logging
import secrets
import threading
from collections.abc import Callable, Iterator
from concurrent import futures
from typing import Any, TypeVar

import requests
from oslo_config import cfg

from ferrum.drivers.redfish import driver_info
from ferrum.drivers.redfish import errors

try:
    import sushy
    from sushy import auth as sushy_auth
    from sushy import connector as sushy_connector
    from sushy import exceptions as sushy_exc
    from sushy import taskmonitor
except ImportError as _exc:  # pragma: no cover - depends on the install
    raise ImportError(
        'The redfish hardware type needs the sushy library, which is not '
        'installed (%s). Install it with: pip install "ferrum[redfish]"'
        % _exc) from _exc

LOG = logging.getLogger(__name__)
T = TypeVar('T')

#: sushy's Redfish vocabulary, for the interfaces, which import no sushy
#: themselves: a conductor without sushy then fails on this module's
#: message naming the library, whichever redfish part loads first.
PowerState = sushy.PowerState
ResetType = sushy.ResetType
BootSource = sushy.BootSource
BootSourceOverrideEnabled = sushy.BootSourceOverrideEnabled
BootSourceOverrideMode = sushy.BootSourceOverrideMode
InstructionSet = sushy.InstructionSet
ProcessorArchitecture = sushy.ProcessorArchitecture
State = sushy.State
VirtualMediaType = sushy.VirtualMediaType

_Key = tuple[str, str, str, bool | str, str]

#: The key of this process's password digests: a digest in the cache key
#: (visible in a debugger or a dump) cannot be compared with a list of
#: precomputed ones, nor with another process's.
_DIGEST_KEY = secrets.token_bytes(32)
#: What a failed request raises, under sushy or from it.
_FAILURES = (sushy_exc.SushyError, requests.RequestException, OSError)


def _key(params: driver_info.RedfishParams) -> _Key:
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
        except _FAILURES as exc:
            LOG.debug('Closing a Redfish session failed: %s', _reason(exc))
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
    except _FAILURES:
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
        key = _key(params)
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
        key = _key(params)
        with self._lock:
            if self._open.get(key) is conn:
                del self._open[key]
            close = not conn.dropped and self._retire(conn, logout=False)
        if close:
            conn.close(logout=False)

    def clear(self) -> None:
        """Drop every connection, logging out of each unused one."""
        with self._lock:
            idle = [conn for conn in self._open.values()
                    if self._retire(conn, logout=True)]
            self._open.clear()
        for conn in idle:
            conn.close(logout=True)

    def __len__(self) -> int:
        with self._lock:
            return len(self._open)


#: The conductor's connections: one process, one cache.
CONNECTIONS = Connections()


def _reason(exc: BaseException) -> str:
    text = getattr(exc, 'detail', None) or str(exc) or type(exc).__name__
    return ' '.join(str(text).split())[:300]


def _is_tls(exc: BaseException) -> bool:
    seen: BaseException | None = exc
    while seen is not None:
        if isinstance(seen, requests.exceptions.SSLError):
            return True
        seen = seen.__cause__ or seen.__context__
    return 'CERTIFICATE_VERIFY_FAILED' in str(exc) or (
        'certificate' in str(exc).lower() and isinstance(exc, OSError))


def _system_ids(root: Any) -> list[str]:
    """The Ids of the BMC's Systems. A failed read raises as any call's
    does (credentials, outage, TLS), for :func:`call` to name its cause."""
    paths = root.get_system_collection().members_identities
    return sorted(path.rstrip('/').rsplit('/', 1)[-1] for path in paths)


def _listed_ids(root: Any) -> list[str]:
    """:func:`_system_ids` for a message only; [] if unreadable."""
    try:
        return _system_ids(root)
    except _FAILURES:
        return []


def _known(ids: list[str]) -> str:
    return ', '.join(ids) if ids else 'none could be listed'


def _default_system(conn: Connection,
                    params: driver_info.RedfishParams) -> str:
    """The path of the BMC's one System, listed once per connection (a
    BMC does not grow Systems while it runs; a new connection lists
    again)."""
    if conn.default_system is None:
        ids = _system_ids(conn.root)
        if len(ids) != 1:
            raise errors.RedfishSystemAmbiguous(
                address=params.address, count=len(ids), known=_known(ids))
        conn.default_system = '%sSystems/%s' % (driver_info.ROOT, ids[0])
    return conn.default_system


def _system(conn: Connection, params: driver_info.RedfishParams) -> Any:
    path = params.system_path or _default_system(conn, params)
    try:
        return conn.root.get_system(path)
    except sushy_exc.ResourceNotFoundError:
        if not params.system_path:
            conn.default_system = None  # gone: list again next time
        raise errors.RedfishSystemNotFound(
            address=params.address, system=params.system_id or path,
            known=_known(_listed_ids(conn.root))) from None


def _translate(exc: Exception, params: driver_info.RedfishParams,
               action: str) -> errors.RedfishError:
    """What a failure of sushy (or under it) means for the operator."""
    where = {'address': params.address, 'action': action,
             'reason': _reason(exc)}
    if _is_tls(exc):
        return errors.RedfishTLSError(**where)
    if isinstance(exc, sushy_exc.AccessError):
        return errors.RedfishAuthError(**where)
    if isinstance(exc, sushy_exc.HTTPError):
        if exc.status_code == 501:
            return errors.RedfishUnsupported(**where)
        if (exc.status_code or 0) >= 500:
            return errors.RedfishServerError(status=exc.status_code, **where)
        return errors.RedfishError(**where)
    if isinstance(exc, (sushy_exc.MissingActionError,
                        sushy_exc.MissingAttributeError,
                        sushy_exc.InvalidParameterValueError)):
        return errors.RedfishUnsupported(**where)
    if isinstance(exc, (sushy_exc.ConnectionError, requests.RequestException,
                        OSError)):
        return errors.RedfishUnreachable(**where)
    return errors.RedfishError(**where)


def _broken(error: errors.RedfishError) -> bool:
    """Whether the connection is to be dropped after ``error``: its BMC
    did not answer (it may have restarted, forgetting its sessions), or
    refused the credentials or the certificate. A BMC that answered 5xx
    keeps it: the connection worked."""
    return (isinstance(error, (errors.RedfishUnreachable,
                               errors.RedfishAuthError,
                               errors.RedfishTLSError))
            and not isinstance(error, errors.RedfishServerError))


ef insert_media(params: driver_info.RedfishParams, media: Any, image: str,
                 source: str) -> None:
    """Insert ``image`` into the sushy VirtualMedia ``media`` (within
    :func:`call`'s function).

    The BMC downloads the image as it inserts it, so an error answer (the
    emulator's 400 or 500 when the download fails) is the image's fault,
    not an outage of the BMC: it becomes :class:`errors.RedfishMediaError`,
    naming the URL and ``source``, the field it came from. A refusal of
    the credentials or a 501 stay what :func:`call` makes of them.
    """
    try:
        media.insert_media(image, inserted=True, write_protected=True)
    except sushy_exc.HTTPError as exc:
        if isinstance(exc, sushy_exc.AccessError) or exc.status_code == 501:
            raise
        raise errors.RedfishMediaError(
            address=params.address, action='inserting virtual media',
            image=image, source=source, reason=_reason(exc)) from None


def call(conf: cfg.ConfigOpts, params: driver_info.RedfishParams,
         action: str, func: Callable[[Any], T]) -> T:
    """Run ``func(sushy System of the node)``, translating failures.

    :param action: what is being done, for messages ("reading the power
        state").
    :raises RedfishError: or a subclass naming the cause.
    """
    return _with_connection(conf, params, action,
                            lambda conn: func(_system(conn, params)))


def _with_connection(conf: cfg.ConfigOpts,
                     params: driver_info.RedfishParams, action: str,
                     func: Callable[[Connection], T]) -> T:
    """``func(connection to the BMC)``, its failures translated, and the
    connection dropped when the failure says it is broken."""
    try:
        with CONNECTIONS.using(conf, params) as conn:
            try:
                return func(conn)
            except _FAILURES as exc:
                error = _translate(exc, params, action)
                if _broken(error):
                    CONNECTIONS.drop(params, conn)
                raise error from None
    except _FAILURES as exc:  # connecting failed: nothing cached to drop
        error = _translate(exc, params, action)
    except errors.RedfishError as exc:
        error = exc
    LOG.debug('Redfish %s on %s failed: %s', action, params.address, error)
    raise error from None


def optional(read: Callable[[], T]) -> tuple[T | None, str]:
    """``(read(), '')``, or ``(None, why)`` when the BMC lacks what it reads.

    For parts of a System a BMC may not have (processors, storage), read
    inside :func:`call`'s function. Lacking means: the System does not
    link it or a field it needs is missing, or the BMC answers the read
    with 404, 501 or a 5xx that the retries did not cure (the emulator,
    like some BMCs, answers 500 for a resource it does not have: the
    System itself answered, so the BMC is up). Anything else raises, for
    :func:`call` to translate: refused credentials, and a BMC that does
    not answer at all.
    """
    try:
        return read(), ''
    except sushy_exc.MissingAttributeError as exc:
        return None, _reason(exc)
    except sushy_exc.AccessError:
        raise
    except sushy_exc.HTTPError as exc:
        status = exc.status_code or 0
        if status in (404, 501) or status >= 500:
            return None, 'the BMC answered %s: %s' % (status, _reason(exc))
        raise


# ---- asynchronous operations: task monitors ---------------------------------
# sushy's resources drop the answer of most PATCHes and actions, and its
# TaskMonitor.wait() sleeps on the caller's thread; these keep the answer
# so that a 202 becomes a wait of the node (ferrum.drivers.redfish.tasks).


@dataclasses.dataclass(frozen=True)
class TaskReport:
    """One read of a task monitor, in Redfish's words.

    ``processing``: the monitor still answers 202. ``state``/``status``:
    the Task's ``TaskState``/``TaskStatus`` when the answer held a Task
    (None otherwise: the operation's own answer, e.g. 204, means it is
    done). ``retry_after``: the seconds the BMC asked to wait before the
    next read, None when it did not say.
    """

    processing: bool
    state: str | None = None
    status: str | None = None
    messages: tuple[str, ...] = ()
    retry_after: float | None = None


def send(resource: Any, method: str, data: dict[str, Any],
         path: str | None = None) -> str | None:
    """PATCH or POST ``data`` to a sushy resource (by default its own
    path), for a function given to :func:`call`.

    :returns: the URI of the task monitor when the BMC answered 202 (the
        operation goes on there), None when it answered that it is done.
    """
    target = path or resource.path
    # sushy keeps the connector private; its resources use it this way too.
    connector = resource._conn
    if method == 'PATCH':
        response = connector.patch(target, data=data)
    else:
        response = connector.post(target, data=data)
    if response.status_code != 202:
        return None
    monitor = taskmonitor.TaskMonitor.from_response(connector, response,
                                                    target)
    return str(monitor.task_monitor_uri)


def _messages(doc: dict[str, Any]) -> tuple[str, ...]:
    found = []
    for message in doc.get('Messages') or ():
        if not isinstance(message, dict):
            continue
        text = message.get('Message') or ' '.join(
            [str(message.get('MessageId') or 'no message')]
            + [str(arg) for arg in message.get('MessageArgs') or ()])
        found.append(' '.join(str(text).split())[:300])
    return tuple(found)


def _report(monitor: Any) -> TaskReport:
    response = monitor.response
    try:
        doc = response.json() if response.content else {}
    except ValueError:
        doc = {}
    doc = doc if isinstance(doc, dict) and 'TaskState' in doc else {}
    retry_after = None
    if response.headers.get('Retry-After') is not None:
        try:
            retry_after = float(monitor.sleep_for)
        except (TypeError, ValueError, OverflowError):
            pass  # neither seconds nor an HTTP date: use our own interval
    return TaskReport(processing=bool(monitor.is_processing),
                      state=doc.get('TaskState'), status=doc.get('TaskStatus'),
                      messages=_messages(doc), retry_after=retry_after)


def read_task(conf: cfg.ConfigOpts, params: driver_info.RedfishParams,
              monitor: str) -> TaskReport | None:
    """Read the task monitor ``monitor`` once (one GET, never waiting).

    :returns: the report, or None when the BMC no longer has the monitor
        (404 or 410: many delete it once the task is over).
    :raises RedfishError: the BMC could not be read (an outage, refused
        credentials...), named as :func:`call` names it.
    """
    return _with_connection(conf, params,
                            'reading task monitor %s' % monitor,
                            lambda conn: _read_monitor(conn.root, monitor))


def _read_monitor(root: Any, monitor: str) -> TaskReport | None:
    try:
        return _report(root.get_task_monitor(monitor))
    except sushy_exc.HTTPError as exc:
        code = exc.status_code or 0
        if code in (404, 410):
            return None
        if 400 <= code < 500 and code not in (401, 403):
            # The monitor's final answer is the operation's: it failed.
            return TaskReport(processing=False, state='Exception',
                              status='Critical', messages=(
                                  'HTTP %d: %s' % (code, _reason(exc)),
                                  *_messages({'Messages': [
                                      info for info in exc.extended_info
                                      or () if isinstance(info, dict)
                                      and info.get('Message') != exc.detail
                                  ]})))
        raise
