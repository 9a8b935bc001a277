# SPDX-License-Identifier: Apache-2.0
"""The one module that talks to OneView (through hpOneView 5.3.0).

Everything else in the ``oneview`` package calls :class:`Client`, which
speaks plain dicts and raises ferrum exceptions. Rules, from the oneview
notes in the design references:

* One logged-in client per set of connection options, kept for the life of
  the conductor (:func:`get_client`): hpOneView logs in when it is built and
  never logs in again, so a session the appliance expired shows up as an
  ``AUTHORIZATION`` error; the call then logs in again and is retried once.
* A request timeout is always set: without one a hung appliance blocks a
  worker forever. Asynchronous OneView tasks wait up to ``[oneview]
  task_timeout``.
* TLS: the appliance's certificate is checked against ``[oneview]
  tls_cacert_file``; only ``allow_insecure_connections`` turns checking off.
  hpOneView would silently skip verification when given no CA file.
* hpOneView raises :class:`HPOneViewException` with an ``errorCode`` (never
  an HTTP status) and lets socket and TLS errors through raw; both become
  :class:`OneViewError` subclasses here, and nowhere else.
* hpOneView 5.x API: resources are objects (``get_by_uri(uri).data``,
  ``.update_power_state()``, ``.get_new_profile()``, ``.delete()``); the 4.x
  calls upstream Ironic used do not exist.
"""

import dataclasses
import functools
import http.client
import logging
import math
import os
import ssl
import sys
import threading
import time
import urllib.parse
from collections.abc import Callable
from typing import Any, TypeVar

from oslo_config import cfg

from ferrum.common import exception
from ferrum.common import plural

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

_HARDWARE_COLLECTION = '/rest/server-hardware'
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
_UNREADABLE_CA = ('tls_cacert_file %s is not a readable file; point it at '
                  'the CA certificate of the appliance')
#: ... and when the CA file holds no certificate OpenSSL can load.
_CA_FILE_WORDS = ('X509', 'PEM lib', 'NO_CERTIFICATE_OR_CRL_FOUND')
_UNUSABLE_CA = ('tls_cacert_file %s holds no CA certificate (%s); point it '
                'at the PEM file of the CA that signed the appliance\'s '
                'certificate')
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


class OneViewError(exception.DriverError):
    """A OneView operation failed; the message says which and why.

    409: the appliance refused what was asked in its current state; a
    retry as it is would fail the same way.
    """

    msg_fmt = 'OneView %(action)s failed: %(reason)s'
    code = 409


class OneViewUnreachable(OneViewError):
    """503: the appliance is down or busy; retrying later may work."""

    code = 503
    msg_fmt = ('OneView appliance %(address)s did not answer during '
               '%(action)s: %(reason)s. Check [oneview] manager_url, the '
               'network, and that the appliance is up.')


class OneViewLoginError(OneViewError):
    """400: the credentials are refused; ferrum's configuration must
    change. Not 409: python-ironicclient retries 409 and 503."""

    code = 400

    msg_fmt = ('Logging in to OneView appliance %(address)s as %(user)s '
               'failed: %(reason)s. Check [oneview] username and password.')


class OneViewTLSError(OneViewLoginError):
    msg_fmt = ('The TLS certificate of OneView appliance %(address)s was '
               'refused: %(reason)s. [oneview] tls_cacert_file (%(ca)s) must '
               'be the CA certificate that signed the appliance\'s.')


class OneViewTaskError(OneViewError):
    msg_fmt = 'The OneView task of %(action)s failed: %(reason)s'


class OneViewNotFound(OneViewError):
    """400: a URI in the node's driver_info or properties is wrong."""

    code = 400
    msg_fmt = ('%(what)s %(uri)s does not exist in OneView (%(action)s); '
               'correct the node\'s %(key)s.')


class OneViewConfigError(OneViewError):
    """400: the [oneview] options must be fixed (the conductor refuses to
    start with them)."""

    code = 400

    msg_fmt = '[oneview] options must be fixed: %(reason)s'


@dataclasses.dataclass(frozen=True)
class Settings:
    """How to reach the appliance; ``repr`` hides the password."""

    address: str
    username: str
    password: str = dataclasses.field(repr=False)
    ca_file: str | None
    request_timeout: float
    task_timeout: int
    api_version: int

    @property
    def hponeview_config(self) -> dict[str, Any]:
        return {'ip': self.address,
                'credentials': {'userName': self.username,
                                'password': self.password},
                'api_version': self.api_version,
                # Falsy means "no verification" to hpOneView.
                'ssl_certificate': self.ca_file or False,
                'timeout': self.request_timeout}

    @property
    def wait(self) -> int:
        """hpOneView's task timeout: -1 waits without limit."""
        return self.task_timeout or -1


def address_of(manager_url: str) -> str:
    """``host[:port]`` from what operators write (hpOneView takes no URL)."""
    text = manager_url.strip()
    if '//' not in text:
        text = '//' + text
    parsed = urllib.parse.urlsplit(text)
    if not parsed.hostname:
        raise OneViewConfigError(
            reason='manager_url "%s" names no host' % manager_url[:100])
    host = parsed.hostname
    if ':' in host:
        host = '[%s]' % host  # IPv6 literal
    return host if parsed.port is None else '%s:%d' % (host, parsed.port)


def settings_from(conf: cfg.ConfigOpts) -> Settings:
    """Check the [oneview] options and bundle them.

    :raises OneViewConfigError: a required option is missing.
    """
    group = conf.oneview
    missing = [name for name in ('manager_url', 'username', 'password')
               if not group[name]]
    if missing:
        raise OneViewConfigError(reason='set %s' % ', '.join(missing))
    ca_file = group.tls_cacert_file or None
    if group.allow_insecure_connections:
        if ca_file:
            LOG.warning('[oneview] allow_insecure_connections is true, so '
                        'tls_cacert_file %s is ignored', ca_file)
        ca_file = None
    elif not ca_file:
        raise OneViewConfigError(
            reason='set tls_cacert_file to the CA certificate of the '
                   'appliance (or, for a test appliance only, '
                   'allow_insecure_connections = true)')
    return Settings(address=address_of(group.manager_url),
                    username=group.username, password=group.password,
                    ca_file=ca_file, request_timeout=group.request_timeout,
                    task_timeout=group.task_timeout,
                    api_version=group.api_version)


def _error_code(exc: Exception) -> str:
    code = getattr(exc, 'error_code', None)
    response = getattr(exc, 'oneview_response', None)
    if not code and isinstance(response, dict):
        code = response.get('errorCode')
    return str(code or '')


def _reason(exc: BaseException) -> str:
    """A one-line reason: hpOneView puts whole tracebacks in some messages."""
    text = (getattr(exc, 'msg', None) or str(exc) or type(exc).__name__)
    lines = [line.strip() for line in str(text).splitlines() if line.strip()]
    reason = lines[-1] if lines else type(exc).__name__
    code = _error_code(exc) if isinstance(exc, Exception) else ''
    return ('%s (%s)' % (reason, code) if code and code not in reason
            else reason)[:500]


def _get(uri: str, session: Any) -> Any:
    return session.connection.get(uri)


class Client:
    """A logged-in session with one appliance, safe to share by threads.

    hpOneView opens a new HTTPS connection per request, so requests from
    several threads do not interfere; only logging in is serialised.
    """

    def __init__(self, settings: Settings,
                 factory: Callable[[dict[str, Any]], Any] | None = None,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.settings = settings
        self._factory = factory or oneview_client.OneViewClient
        self._clock = clock
        self._lock = threading.Lock()
        self._session: Any = None
        #: The last refused login, when logins resume, the next pause.
        self._refused: tuple[OneViewLoginError, float, float] | None = None

    # ---- session and error translation ----------------------------------

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
                if isinstance(error, OneViewLoginError):
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
        except OneViewError as exc:
            LOG.warning('OneView credentials could not be verified at '
                        'start-up; oneview nodes fail until this is fixed: '
                        '%s', exc)
            return False
        return session is not None

    def _login_error(self, exc: Exception) -> OneViewError:
        """What a failed login means: TLS, credentials, or no answer."""
        reason, text = _reason(exc), str(exc)
        address = self.settings.address
        if isinstance(exc, FileNotFoundError) or 'FileNotFoundError' in text:
            # hpOneView opens the CA file at login: the path is wrong.
            return OneViewConfigError(
                reason=_UNREADABLE_CA % self.settings.ca_file)
        if any(word in text for word in _CA_FILE_WORDS):
            return OneViewConfigError(
                reason=_UNUSABLE_CA % (self.settings.ca_file, reason))
        if isinstance(exc, ssl.SSLCertVerificationError) or any(
                word in text for word in _TLS_WORDS):
            return OneViewTLSError(
                address=address, user=self.settings.username,
                reason=reason, ca=self.settings.ca_file)
        if isinstance(exc, (OSError, http.client.HTTPException)) or (
                _error_code(exc) in _UNAVAILABLE_ERRORS
                or any(word in text for word in _UNREACHABLE_WORDS)):
            return OneViewUnreachable(address=address, action='login',
                                      reason=reason)
        return OneViewLoginError(address=address, user=self.settings.username,
                                 reason=reason)

    def _back_off(self, error: OneViewLoginError) -> None:
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
            raises :class:`OneViewNotFound` naming them.
        """
        session = self._session or self._login()
        for attempt in (1, 2):
            try:
                return func(session)
            except ov_exceptions.HPOneViewTaskError as exc:
                raise OneViewTaskError(action=action,
                                       reason=_reason(exc)) from exc
            except ov_exceptions.HPOneViewTimeout:
                raise OneViewTaskError(
                    action=action, reason='still running after %ss '
                    '([oneview] task_timeout); OneView may still finish it'
                    % self.settings.task_timeout) from None
            except ov_exceptions.HPOneViewException as exc:
                code = _error_code(exc)
                if code in _SESSION_ERRORS and attempt == 1:
                    LOG.info('OneView session expired (%s); logging in '
                             'again', code)
                    session = self._login(stale=session)
                    continue
                if code in _UNAVAILABLE_ERRORS:
                    raise OneViewUnreachable(address=self.settings.address,
                                             action=action,
                                             reason=_reason(exc)) from exc
                if not_found is not None and (
                        code in _NOT_FOUND_ERRORS
                        or 'not found' in _reason(exc).lower()):
                    raise OneViewNotFound(
                        what=not_found[0], uri=not_found[1], action=action,
                        key=_WHERE_FROM.get(not_found[0],
                                            'driver_info')) from exc
                raise OneViewError(action=action, reason=_reason(exc)) from exc
            except (FileNotFoundError, PermissionError,
                    IsADirectoryError):
                # hpOneView reads the CA file at every connection: it was
                # removed or made unreadable since the login.
                raise OneViewConfigError(
                    reason=_UNREADABLE_CA % self.settings.ca_file) from None
            except ssl.SSLCertVerificationError as exc:
                raise OneViewTLSError(
                    address=self.settings.address,
                    user=self.settings.username, reason=_reason(exc),
                    ca=self.settings.ca_file) from exc
            except ssl.SSLError as exc:
                if not any(word in str(exc) for word in _CA_FILE_WORDS):
                    raise self._unreached(action, exc) from None
                raise OneViewConfigError(reason=_UNUSABLE_CA % (
                    self.settings.ca_file, _reason(exc))) from None
            except (OSError, http.client.HTTPException) as exc:
                # Also TimeoutError and resets: raw from hpOneView.
                raise self._unreached(action, exc) from None
        raise AssertionError('unreachable')

    def _unreached(self, action: str, exc: BaseException
                   ) -> 'OneViewUnreachable':
        return OneViewUnreachable(address=self.settings.address,
                                  action=action, reason=_reason(exc))

    # ---- server hardware --------------------------------------------------

    def get_server_hardware(self, uri: str) -> dict[str, Any]:
        data = self.call('reading server hardware %s' % uri,
                         lambda c: c.server_hardware.get_by_uri(uri).data,
                         not_found=('Server hardware', uri))
        return dict(data)

    def list_server_hardware(self, page_size: int) -> list[dict[str, Any]]:
        """Every server hardware, ``page_size`` per request.

        Pages are followed through ``nextPageUri`` so that an appliance
        answering with smaller pages still yields everything.
        """
        members: list[dict[str, Any]] = []
        uri: str | None = '%s?start=0&count=%d' % (_HARDWARE_COLLECTION,
                                                   page_size)
        seen: set[str] = set()
        while uri and uri not in seen:
            seen.add(uri)
            page = self.call('listing server hardware',
                             functools.partial(_get, uri))
            if not isinstance(page, dict):
                raise OneViewError(action='listing server hardware',
                                   reason='unexpected answer %r'
                                   % (str(page)[:200],))
            batch = page.get('members') or []
            members.extend(dict(item) for item in batch)
            following = page.get('nextPageUri')
            uri = str(following) if following and batch else None
        return members

    def set_power_state(self, uri: str, body: dict[str, str]) -> None:
        """PUT ``body`` to the hardware's powerState and wait for the task."""
        wait = self.settings.wait

        def run(c: Any) -> None:
            hardware = c.server_hardware.new(c.connection, {'uri': uri})
            hardware.update_power_state(body, timeout=wait)
        self.call('setting the power of %s to %s' % (
            uri, '/'.join(str(v) for v in body.values())), run,
            not_found=('Server hardware', uri))

    # ---- templates and profiles -------------------------------------------

    def get_template(self, uri: str) -> dict[str, Any]:
        data = self.call(
            'reading server profile template %s' % uri,
            lambda c: c.server_profile_templates.get_by_uri(uri).data,
            not_found=('Server profile template', uri))
        return dict(data)

    def create_profile(self, template_uri: str, hardware_uri: str,
                       name: str, first_boot_device: str | None = None
                       ) -> str:
        """Apply a new profile from the template; return the profile URI.

        :param first_boot_device: a OneView boot device (PXE, HardDisk...)
            to put first in the template's boot order.
        """
        wait = self.settings.wait

        def run(c: Any) -> str:
            template = c.server_profile_templates.get_by_uri(template_uri)
            profile = dict(template.get_new_profile())
            profile['name'] = name
            profile['serverHardwareUri'] = hardware_uri
            # Unlinked from the template, as upstream: a template change
            # must not touch a running node's profile.
            profile['serverProfileTemplateUri'] = ''
            if first_boot_device:
                boot = dict(profile.get('boot') or {})
                order = [str(d) for d in boot.get('order') or []]
                boot['order'] = [first_boot_device] + [
                    d for d in order if d != first_boot_device]
                boot['manageBoot'] = True
                profile['boot'] = boot
            created = c.server_profiles.create(profile, timeout=wait)
            return str(created.data['uri'])
        return self.call('applying a profile from %s to %s' % (
            template_uri, hardware_uri), run,
            not_found=('Server profile template', template_uri))

    def get_profile(self, uri: str) -> dict[str, Any]:
        data = self.call('reading server profile %s' % uri,
                         lambda c: c.server_profiles.get_by_uri(uri).data,
                         not_found=('Server profile', uri))
        return dict(data)

    def set_first_boot_device(self, uri: str, device: str) -> None:
        """Move ``device`` (a OneView name: PXE, HardDisk...) to the front
        of the profile's boot order; nothing is written if it already is."""
        wait = self.settings.wait

        def run(c: Any) -> None:
            profile = c.server_profiles.get_by_uri(uri)
            boot = dict(profile.data.get('boot') or {})
            order = [str(d) for d in boot.get('order') or []]
            if order[:1] == [device] and boot.get('manageBoot'):
                return
            boot['order'] = [device] + [d for d in order if d != device]
            boot['manageBoot'] = True
            profile.update({'boot': boot}, timeout=wait)
        self.call('setting %s first in the boot order of profile %s'
                  % (device, uri), run, not_found=('Server profile', uri))

    def delete_profile(self, uri: str) -> bool:
        """Remove a profile; False if it was already gone."""
        wait = self.settings.wait

        def run(c: Any) -> None:
            c.server_profiles.get_by_uri(uri).delete(timeout=wait)
        try:
            self.call('removing server profile %s' % uri, run,
                      not_found=('Server profile', uri))
        except OneViewNotFound:
            return False
        return True


_CLIENTS: dict[Settings, Client] = {}
#: Settings whose login was already tried at a conductor's start.
_VERIFIED: set[Settings] = set()
_CLIENTS_LOCK = threading.Lock()


class _OneLine(logging.Filter):
    """hpOneView logs a failed login at ERROR with the whole traceback,
    also inside its message: keep one line (ferrum logs the cause too)."""

    def filter(self, record: logging.LogRecord) -> bool:
        if record.exc_info or '\n' in str(record.msg):
            lines = record.getMessage().strip().splitlines()
            record.msg, record.args = (lines[0] if lines else ''), ()
            record.exc_info = record.exc_text = None
        return True


def _quieten_hponeview() -> None:
    # A filter only sees what its own logger logs, not its children's, so
    # each of hpOneView's module loggers gets one (they exist once its
    # modules are imported, as they are here).
    for name in list(logging.root.manager.loggerDict):
        if name == 'hpOneView' or name.startswith('hpOneView.'):
            logger = logging.getLogger(name)
            if not any(isinstance(f, _OneLine) for f in logger.filters):
                logger.addFilter(_OneLine())


def check_configuration(conf: cfg.ConfigOpts) -> None:
    """Check the [oneview] options; verify the login in the background.

    Called when the conductor starts. Missing or unreadable options, and a
    CA file without a certificate, raise (the conductor does not start);
    wrong credentials or an appliance that is down are only logged, since
    the appliance may come back.

    :raises OneViewConfigError: naming the option to fix.
    """
    client = get_client(conf)
    ca_file = client.settings.ca_file
    if ca_file is not None:
        if not (os.path.isfile(ca_file) and os.access(ca_file, os.R_OK)):
            raise OneViewConfigError(reason=_UNREADABLE_CA % ca_file)
        try:
            ssl.create_default_context(cafile=ca_file)
        except ssl.SSLError as exc:
            raise OneViewConfigError(
                reason=_UNUSABLE_CA % (ca_file, _reason(exc))) from None
    with _CLIENTS_LOCK:
        if client.settings in _VERIFIED:
            return  # each oneview interface calls this; one login will do
        _VERIFIED.add(client.settings)
    thread = threading.Thread(target=client.verify_login, daemon=True,
                              name='oneview-login-check')
    thread.start()


def get_client(conf: cfg.ConfigOpts) -> Client:
    """The conductor's client for the configured appliance.

    Options are read at each call, so a changed configuration gets its own
    client (and login) while the session of the old one is left to expire.

    :raises OneViewConfigError: the [oneview] options are incomplete.
    """
    settings = settings_from(conf)
    with _CLIENTS_LOCK:
        client = _CLIENTS.get(settings)
        if client is None:
            _quieten_hponeview()
            client = _CLIENTS[settings] = Client(settings)
        return client

