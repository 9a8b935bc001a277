# SPDX-License-Identifier: Apache-2.0
"""The one module that talks to Redfish BMCs (through sushy).

Everything else in the ``redfish`` package calls :func:`call` with a
function of the node's sushy ``System`` and gets plain values back, or one
of :mod:`ferrum.drivers.redfish.errors`. Rules:

* One sushy connection per BMC address, user, password, TLS verification
  and auth type, kept and reused (:class:`Connections`): making one reads
  the service root and, for session auth, logs in. At most ``[redfish]
  connection_cache_size`` are kept; the least recently used is dropped. A
  connection whose BMC failed to answer or refused the credentials is
  dropped too, so the next call starts afresh (a restarted BMC forgets its
  sessions).
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
import dataclasses
import hashlib
import logging
import threading
from collections.abc import Callable
from typing import Any, TypeVar

import requests
from oslo_config import cfg

from ferrum.drivers.redfish import driver_info
from ferrum.drivers.redfish import errors

try:
    import sushy
    from sushy import auth as sushy_auth
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


def _key(params: driver_info.RedfishParams) -> _Key:
    # A digest, not the password: the key shows up in debuggers and dumps.
    digest = hashlib.sha256(params.password.encode()).hexdigest()
    return (params.address, params.username, digest, params.verify_ca,
            params.auth_type)


def _auth(params: driver_info.RedfishParams, kind: str) -> Any:
    kinds = {'basic': sushy_auth.BasicAuth, 'session': sushy_auth.SessionAuth,
             # Falls back to HTTP Basic when there is no SessionService.
             'auto': sushy_auth.SessionOrBasicAuth}
    return kinds[kind](username=params.username or None,
                                   password=params.password or None)


def _connect(conf: cfg.ConfigOpts, params: driver_info.RedfishParams,
             auth: Any) -> Any:
    """A sushy connection: reads the service root, then logs in."""
    options = conf.redfish
    return sushy.Sushy(
        params.address, verify=params.verify_ca, auth=auth,
        server_side_retries=options.server_side_retries,
        server_side_retries_delay=options.server_side_retries_delay,
        read_timeout=options.request_timeout,
        connect_timeout=options.connect_timeout)


def _has_sessions(conf: cfg.ConfigOpts,
                  params: driver_info.RedfishParams) -> bool:
    """Whether the service root links a SessionService (the root is
    readable without credentials). True when that cannot be told."""
    try:
        root = _connect(conf, params, sushy_auth.BasicAuth())
        return 'SessionService' in (root.json or {})
    except (sushy_exc.SushyError, requests.RequestException, OSError):
        return True


def _open(conf: cfg.ConfigOpts, params: driver_info.RedfishParams) -> Any:
    """A connection with the node's auth type."""
    if params.auth_type == 'auto':
        basic = _connect(conf, params, _auth(params, 'basic'))
        if 'SessionService' not in (basic.json or {}):
            # No sessions to try: sushy's "auto" would still try a login
            # and log its refusal at ERROR, "check credentials", for
            # credentials that work.
            return basic
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
    """Open sushy connections, least recently used first, bounded."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._open: collections.OrderedDict[_Key, Any] = (
            collections.OrderedDict())

    def get(self, conf: cfg.ConfigOpts,
            params: driver_info.RedfishParams) -> Any:
        key = _key(params)
        with self._lock:
            conn = self._open.get(key)
            if conn is not None:
                self._open.move_to_end(key)
                return conn
        # Outside the lock: connecting is I/O, and other BMCs must not wait.
        conn = _open(conf, params)
        options = conf.redfish
        with self._lock:
            # Another thread may have connected meanwhile: keep one.
            conn = self._open.setdefault(key, conn)
            self._open.move_to_end(key)
            while len(self._open) > options.connection_cache_size:
                # Dropped, not logged out: sushy closes its session when
                # the object goes; requests were "Connection: close".
                self._open.popitem(last=False)
        return conn

    def drop(self, params: driver_info.RedfishParams) -> None:
        with self._lock:
            self._open.pop(_key(params), None)

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


def _system_ids(conn: Any) -> list[str]:
    """The Ids of the BMC's Systems. A failed read raises as any call's
    does (credentials, outage, TLS), for :func:`call` to name its cause."""
    paths = conn.get_system_collection().members_identities
    return sorted(path.rstrip('/').rsplit('/', 1)[-1] for path in paths)


def _listed_ids(conn: Any) -> list[str]:
    """:func:`_system_ids` for a message only; [] if unreadable."""
    try:
        return _system_ids(conn)
    except (sushy_exc.SushyError, requests.RequestException, OSError):
        return []


def _known(ids: list[str]) -> str:
    return ', '.join(ids) if ids else 'none could be listed'


def _system(conn: Any, params: driver_info.RedfishParams) -> Any:
    path = params.system_path
    if not path:
        ids = _system_ids(conn)
        if len(ids) != 1:
            raise errors.RedfishSystemAmbiguous(
                address=params.address, count=len(ids), known=_known(ids))
        path = '%sSystems/%s' % (driver_info.ROOT, ids[0])
    try:
        return conn.get_system(path)
    except sushy_exc.ResourceNotFoundError:
        raise errors.RedfishSystemNotFound(
            address=params.address, system=params.system_id,
            known=_known(_listed_ids(conn))) from None


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
            return errors.RedfishUnreachable(**where)
        return errors.RedfishError(**where)
    if isinstance(exc, (sushy_exc.MissingActionError,
                        sushy_exc.MissingAttributeError,
                        sushy_exc.InvalidParameterValueError)):
        return errors.RedfishUnsupported(**where)
    if isinstance(exc, (sushy_exc.ConnectionError, requests.RequestException,
                        OSError)):
        return errors.RedfishUnreachable(**where)
    return errors.RedfishError(**where)


def insert_media(params: driver_info.RedfishParams, media: Any, image: str,
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
    try:
        conn = CONNECTIONS.get(conf, params)
        return func(_system(conn, params))
    except errors.RedfishError:
        raise
    except (sushy_exc.SushyError, requests.RequestException,
            OSError) as exc:
        error = _translate(exc, params, action)
        if isinstance(error, (errors.RedfishUnreachable,
                              errors.RedfishAuthError,
                              errors.RedfishTLSError)):
            CONNECTIONS.drop(params)
        LOG.debug('Redfish %s on %s failed: %s', action, params.address,
                  error)
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
    action = 'reading task monitor %s' % monitor
    try:
        return _report(CONNECTIONS.get(conf, params).get_task_monitor(
            monitor))
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
        error = _translate(exc, params, action)
    except (sushy_exc.SushyError, requests.RequestException,
            OSError) as exc:
        error = _translate(exc, params, action)
    if isinstance(error, (errors.RedfishUnreachable, errors.RedfishAuthError,
                          errors.RedfishTLSError)):
        CONNECTIONS.drop(params)
    raise error from None
