# SPDX-License-Identifier: Apache-2.0
"""The one package that talks to Redfish BMCs (through sushy).

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
* sushy is imported in this package and nowhere else (its connection
  cache is :mod:`.connections`, its task-monitor reads :mod:`.monitors`);
  its failures become ferrum exceptions here, each naming the
  ``driver_info`` field to fix (see :func:`_translate`). The password is
  never part of a message: sushy's messages hold URLs only.
"""

import logging
from collections.abc import Callable
from typing import Any, TypeVar

import requests
from oslo_config import cfg

from ferrum.drivers.redfish import driver_info
from ferrum.drivers.redfish import errors

try:
    import sushy
    from sushy import exceptions as sushy_exc
except ImportError as _exc:  # pragma: no cover - depends on the install
    raise ImportError(
        'The redfish hardware type needs the sushy library, which is not '
        'installed (%s). Install it with: pip install "ferrum[redfish]"'
        % _exc) from _exc

# After the check above, so that a missing sushy is named by its message
# whichever module of this package loads first.
from ferrum.drivers.redfish.client import connections  # noqa: E402
from ferrum.drivers.redfish.client import monitors  # noqa: E402

LOG = logging.getLogger(__name__)
T = TypeVar('T')

#: sushy's Redfish vocabulary, for the interfaces, which import no sushy
#: themselves: a conductor without sushy then fails on this package's
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

Connection = connections.Connection
Connections = connections.Connections
#: The conductor's connections: one process, one cache (a test may put
#: another in its place).
CONNECTIONS = connections.CONNECTIONS
TaskReport = monitors.TaskReport


class ClosesSessions:
    """Mixin of the Redfish interfaces: their ``shutdown`` logs out of
    every BMC. A BMC allows few sessions (some as few as eight), and a
    conductor restarted a few times must not leave its old ones to time
    out."""

    def shutdown(self) -> None:
        CONNECTIONS.clear()


send = monitors.send
_FAILURES = connections.FAILURES
_key = connections.cache_key
_reason = connections.reason


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
        return monitors.report(root.get_task_monitor(monitor))
    except sushy_exc.HTTPError as exc:
        code = exc.status_code or 0
        if code in (404, 410):
            return None
        if 400 <= code < 500 and code not in (401, 403):
            # The monitor's final answer is the operation's: it failed.
            return TaskReport(processing=False, state='Exception',
                              status='Critical', messages=(
                                  'HTTP %d: %s' % (code, _reason(exc)),
                                  *monitors.messages({'Messages': [
                                      info for info in exc.extended_info
                                      or () if isinstance(info, dict)
                                      and info.get('Message') != exc.detail
                                  ]})))
        raise
