# SPDX-License-Identifier: Apache-2.0
"""The one module that talks to OneView (through hpOneView 5.3.0).

:class:`Session` logs in, runs a call on hpOneView's client and turns what
it raises into :mod:`ferrum.drivers.oneview.errors`; everything else in the
``oneview`` package calls :class:`ferrum.drivers.oneview.client.Client` (a
session with OneView's resources), which speaks plain dicts and raises
ferrum exceptions. Rules, from the oneview notes in the design references:

* One logged-in client per set of connection options, kept for the life of
  the conductor (:func:`ferrum.drivers.oneview.client.get_client`):
  hpOneView logs in when it is built and never logs in again, so a session
  the appliance expired shows up as an ``AUTHORIZATION`` error; the call
  then logs in again and is retried once.
* A request timeout is always set: without one a hung appliance blocks a
  worker forever. Asynchronous OneView tasks wait up to ``[oneview]
  task_timeout``.
* TLS: the appliance's certificate is checked against ``[oneview]
  tls_cacert_file``; only ``allow_insecure_connections`` turns checking off.
  hpOneView would silently skip verification when given no CA file.
* hpOneView raises ``HPOneViewException`` with an ``errorCode`` (never
  an HTTP status) and lets socket and TLS errors through raw; both become
  :class:`~ferrum.drivers.oneview.errors.OneViewError` subclasses here, and
  nowhere else.
* hpOneView 5.x API: resources are objects (``get_by_uri(uri).data``,
  ``.update_power_state()``, ``.get_new_profile()``, ``.delete()``); the 4.x
  calls upstream Ironic used do not exist.
"""

import http.client
import logging
import math
import ssl
import sys
import threading
import time
from collections.abc import Callable
from typing import Any, TypeVar

from ferrum.common import plural
from ferrum.drivers.oneview import errors
from ferrum.drivers.oneview import settings as settings_mod

_EXCEPTHOOK = sys.excepthook
try:
    from hpOneView import exceptions as ov_exceptions
    from hpOneView import oneview_client
except ImportError as _exc:  # pragma: no cover - depends on the install
    raise ImportError(
        'The oneview hardware type needs the hpOneView 5.3.0 library, which '
        'is not installed (%s). Install it with: pip install '
        '"ferrum[oneview]"' % _exc) from _exc
finally:
    # Importing hpOneView replaces the interpreter's excepthook with its own.
    sys.excepthook = _EXCEPTHOOK

LOG = logging.getLogger(__name__)
T = TypeVar('T')

#: errorCodes of a session the appliance no longer knows (expired, or the
#: appliance restarted): log in again and retry once.
_SESSION_ERRORS = frozenset({'AUTHORIZATION', 'SESSION_EXPIRED',
                             'INVALID_SESSION', 'SESSION_NOT_FOUND'})
_NOT_FOUND_ERRORS = frozenset({'RESOURCE_NOT_FOUND', 'NOT_FOUND'})
#: errorCodes of an appliance that is up but not serving (starting, backup).
_UNAVAILABLE_ERRORS = frozenset({'SERVICE_UNAVAILABLE', 'APPLIANCE_BUSY'})

#: What hpOneView's login failure text (a traceback) holds when the
#: appliance, not the credentials, is the problem.
_UNREACHABLE_WORDS = ('Connection', 'timed out', 'Errno',
                      'SERVICE_UNAVAILABLE', 'Service Unavailable')
#: ... and when the appliance's certificate was refused.
_TLS_WORDS = ('CERTIFICATE_VERIFY_FAILED', 'certificate verify failed',
              'SSLCertVerificationError')
#: ... and when the CA file holds no certificate OpenSSL can load.
_CA_FILE_WORDS = ('X509', 'PEM lib', 'NO_CERTIFICATE_OR_CRL_FOUND')
#: Where the URI of each OneView resource a node names comes from.
_WHERE_FROM = {
    'Server hardware': 'driver_info server_hardware_uri',
    'Server profile template': 'properties capabilities '
                               'server_profile_template_uri',
    'Server profile': 'driver_info applied_server_profile_uri',
}
#: Seconds logins pause after the credentials were refused, doubling per
#: refusal up to the maximum: every call and periodic run logging in
#: again with a wrong password can lock the account on a real appliance.
LOGIN_BACKOFF_S = 30.0
LOGIN_BACKOFF_MAX_S = 600.0


class Session:
    """A logged-in session with one appliance, safe to share by threads.

    hpOneView opens a new HTTPS connection per request, so requests from
    several threads do not interfere; only logging in is serialised.
    """

    def __init__(self, settings: settings_mod.Settings,
                 factory: Callable[[dict[str, Any]], Any] | None = None,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.settings = settings
        self._factory = factory or oneview_client.OneViewClient
        self._clock = clock
        self._lock = threading.Lock()
        self._session: Any = None
        #: The last refused login, when logins resume, the next pause.
        self._refused: tuple[errors.OneViewLoginError, float,
                             float] | None = None

    def _login(self, stale: Any = None) -> Any:
        with self._lock:
            if self._session is not None and self._session is not stale:
                return self._session  # another thread logged in meanwhile
            self._session = None
            self._check_backoff()
            try:
                session = self._factory(self.settings.hponeview_config)
            except (ov_exceptions.HPOneViewException, OSError,
                    http.client.HTTPException) as exc:
                error = self._login_error(exc)
                if isinstance(error, errors.OneViewLoginError):
                    self._back_off(error)
                LOG.warning('OneView login failed: %s', error)
                raise error from exc
            LOG.info('Logged in to OneView appliance %s as %s',
                     self.settings.address, self.settings.username)
            self._session = session
            self._refused = None
            return session

    def verify_login(self) -> bool:
        """Log in now, to find bad credentials at start-up; True when it
        worked. Failures are logged (as a warning), never raised."""
        try:
            session = self._session or self._login()
        except errors.OneViewError as exc:
            LOG.warning('OneView credentials could not be verified at '
                        'start-up; oneview nodes fail until this is fixed: '
                        '%s', exc)
            return False
        return session is not None

    def _login_error(self, exc: Exception) -> errors.OneViewError:
        """What a failed login means: TLS, credentials, or no answer."""
        reason, text = errors.reason(exc), str(exc)
        address = self.settings.address
        if isinstance(exc, FileNotFoundError) or 'FileNotFoundError' in text:
            # hpOneView opens the CA file at login: the path is wrong.
            return errors.OneViewConfigError(
                reason=settings_mod.UNREADABLE_CA % self.settings.ca_file)
        if any(word in text for word in _CA_FILE_WORDS):
            return errors.OneViewConfigError(reason=settings_mod.UNUSABLE_CA
                                             % (self.settings.ca_file, reason))
        if isinstance(exc, ssl.SSLCertVerificationError) or any(
                word in text for word in _TLS_WORDS):
            return errors.OneViewTLSError(
                address=address, user=self.settings.username,
                reason=reason, ca=self.settings.ca_file)
        if isinstance(exc, (OSError, http.client.HTTPException)) or (
                errors.error_code(exc) in _UNAVAILABLE_ERRORS
                or any(word in text for word in _UNREACHABLE_WORDS)):
            return errors.OneViewUnreachable(address=address, action='login',
                                             reason=reason)
        return errors.OneViewLoginError(
            address=address, user=self.settings.username, reason=reason)

    def _back_off(self, error: errors.OneViewLoginError) -> None:
        pause = (LOGIN_BACKOFF_S if self._refused is None
                 else min(self._refused[2] * 2, LOGIN_BACKOFF_MAX_S))
        self._refused = (error, self._clock() + pause, pause)

    def _check_backoff(self) -> None:
        """Refuse to log in while a refused login's pause lasts."""
        if self._refused is None:
            return
        error, resume, _pause = self._refused
        left = resume - self._clock()
        if left > 0:
            raise type(error)('%s Logins are paused for %s more to spare '
                              'the account.' % (error, plural.count(
                                  math.ceil(left), 'second')),
                              **error.kwargs)

    def call(self, action: str, func: Callable[[Any], T],
             not_found: tuple[str, str] | None = None) -> T:
        """Run ``func(hpOneView client)``, translating what it raises.

        :param action: what is being done, for messages ("reading server
            hardware /rest/server-hardware/1").
        :param not_found: ``(what, uri)``: an RESOURCE_NOT_FOUND answer
            raises :class:`~ferrum.drivers.oneview.errors.OneViewNotFound`
            naming them.
        """
        session = self._session or self._login()
        for attempt in (1, 2):
            try:
                return func(session)
            except ov_exceptions.HPOneViewTaskError as exc:
                raise errors.OneViewTaskError(
                    action=action, reason=errors.reason(exc)) from exc
            except ov_exceptions.HPOneViewTimeout:
                raise errors.OneViewTaskError(
                    action=action, reason='still running after %ss '
                    '([oneview] task_timeout); OneView may still finish it'
                    % self.settings.task_timeout) from None
            except ov_exceptions.HPOneViewException as exc:
                code = errors.error_code(exc)
                if code in _SESSION_ERRORS and attempt == 1:
                    LOG.info('OneView session expired (%s); logging in '
                             'again', code)
                    session = self._login(stale=session)
                    continue
                if code in _UNAVAILABLE_ERRORS:
                    raise errors.OneViewUnreachable(
                        address=self.settings.address, action=action,
                        reason=errors.reason(exc)) from exc
                if not_found is not None and (
                        code in _NOT_FOUND_ERRORS
                        or 'not found' in errors.reason(exc).lower()):
                    raise errors.OneViewNotFound(
                        what=not_found[0], uri=not_found[1], action=action,
                        key=_WHERE_FROM.get(not_found[0],
                                            'driver_info')) from exc
                raise errors.OneViewError(
                    action=action, reason=errors.reason(exc)) from exc
            except (FileNotFoundError, PermissionError,
                    IsADirectoryError):
                # hpOneView reads the CA file at every connection: it was
                # removed or made unreadable since the login.
                raise errors.OneViewConfigError(
                    reason=settings_mod.UNREADABLE_CA
                    % self.settings.ca_file) from None
            except ssl.SSLCertVerificationError as exc:
                raise errors.OneViewTLSError(
                    address=self.settings.address,
                    user=self.settings.username, reason=errors.reason(exc),
                    ca=self.settings.ca_file) from exc
            except ssl.SSLError as exc:
                if not any(word in str(exc) for word in _CA_FILE_WORDS):
                    raise self._unreached(action, exc) from None
                raise errors.OneViewConfigError(
                    reason=settings_mod.UNUSABLE_CA % (
                        self.settings.ca_file, errors.reason(exc))) from None
            except (OSError, http.client.HTTPException) as exc:
                # Also TimeoutError and resets: raw from hpOneView.
                raise self._unreached(action, exc) from None
        raise AssertionError('unreachable')

    def _unreached(self, action: str, exc: BaseException
                   ) -> errors.OneViewUnreachable:
        return errors.OneViewUnreachable(address=self.settings.address,
                                         action=action,
                                         reason=errors.reason(exc))


class _OneLine(logging.Filter):
    """hpOneView logs a failed login at ERROR with the whole traceback,
    also inside its message: keep one line (ferrum logs the cause too)."""

    def filter(self, record: logging.LogRecord) -> bool:
        if record.exc_info or '\n' in str(record.msg):
            lines = record.getMessage().strip().splitlines()
            record.msg, record.args = (lines[0] if lines else ''), ()
            record.exc_info = record.exc_text = None
        return True


def quieten_hponeview() -> None:
    # A filter only sees what its own logger logs, not its children's, so
    # each of hpOneView's module loggers gets one (they exist once its
    # modules are imported, as they are here).
    for name in list(logging.root.manager.loggerDict):
        if name == 'hpOneView' or name.startswith('hpOneView.'):
            logger = logging.getLogger(name)
            if not any(isinstance(f, _OneLine) for f in logger.filters):
                logger.addFilter(_OneLine())
