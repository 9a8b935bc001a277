# SPDX-License-Identifier: Apache-2.0
"""TLS on ferrum's two HTTP endpoints and on the API's calls to conductors.

:func:`server_context` builds the one :class:`ssl.SSLContext` the API
(``[api] enable_ssl_api``) or a conductor's JSON-RPC endpoint (``[json_rpc]
use_ssl``) serves with; :func:`client_settings` checks what the API's
JSON-RPC client verifies conductors with and presents to them. Every file
is read and parsed when the service starts, so a missing, unreadable or
mismatched file stops it with one line naming the option and the file,
never on a client's first request. :func:`client_failure` says, in
ferrum's words, why a call's TLS handshake failed.

The stdlib defaults are kept: TLS 1.2 or later, OpenSSL's secure ciphers,
and on the client side the conductor's certificate must name the host of
the address it registered.
"""

import ssl
from collections.abc import Iterator
from typing import NamedTuple

from oslo_config import cfg

from ferrum.common import exception

_PEM_CERTIFICATE = b'-----BEGIN CERTIFICATE-----'


class TLSFileInvalid(exception.FerrumException):
    msg_fmt = 'Cannot use %(option)s = %(path)s: %(reason)s'


class TLSOptionMissing(exception.FerrumException):
    msg_fmt = ('%(switch)s is set but %(option)s is not: set it to the PEM '
               'file of %(what)s.')


class ServerTLS(NamedTuple):
    context: ssl.SSLContext
    cert_file: str
    key_file: str


class _File(NamedTuple):
    option: str  # as messages name it, e.g. "[ssl] cert_file"
    path: str


def _read(file: _File) -> bytes:
    try:
        with open(file.path, 'rb') as source:
            return source.read()
    except FileNotFoundError:
        reason = 'no such file'
    except PermissionError:
        reason = 'this user may not read it'
    except IsADirectoryError:
        reason = 'it is a directory'
    except OSError as exc:
        reason = exc.strerror or str(exc)
    raise TLSFileInvalid(option=file.option, path=file.path, reason=reason)


def _load_authorities(context: ssl.SSLContext, file: _File) -> None:
    """Trust the certificates of ``file`` in ``context``."""
    data = _read(file)
    if _PEM_CERTIFICATE not in data:
        raise TLSFileInvalid(option=file.option, path=file.path,
                             reason='it holds no PEM certificate (no '
                                    '"-----BEGIN CERTIFICATE-----" line)')
    try:
        context.load_verify_locations(cadata=data.decode('ascii', 'replace'))
    except ssl.SSLError as exc:
        raise TLSFileInvalid(option=file.option, path=file.path,
                             reason='not a valid PEM certificate (%s)'
                             % exc) from exc


def _load_pair(context: ssl.SSLContext, cert: _File,
               key: _File | None) -> None:
    """Present the certificate ``cert`` with the private key ``key``.

    :param key: None when the key follows the certificate in ``cert``.
    """
    # The certificate alone first, so that a bad file is named as such.
    _load_authorities(ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT), cert)
    key = key or cert
    _read(key)

    def no_password() -> bytes:
        # Without a callback OpenSSL would prompt on the terminal and wait.
        raise TLSFileInvalid(option=key.option, path=key.path,
                             reason='the private key is encrypted; ferrum '
                                    'needs it unencrypted (openssl pkey '
                                    '-in KEY -out PLAIN_KEY)')
    try:
        context.load_cert_chain(cert.path, key.path, password=no_password)
    except ssl.SSLError as exc:
        if exc.reason == 'KEY_VALUES_MISMATCH':
            raise TLSFileInvalid(option=key.option, path=key.path,
                                 reason='it is not the private key of %s = '
                                        '%s' % (cert.option, cert.path)
                                 ) from exc
        raise TLSFileInvalid(option=key.option, path=key.path,
                             reason='it holds no PEM private key (%s)'
                             % exc) from exc


#: The endpoint served by each option group: the option turning TLS on.
_SWITCHES = {'api': '[api] enable_ssl_api', 'json_rpc': '[json_rpc] use_ssl'}


def _server_files(conf: cfg.ConfigOpts, group: str) -> tuple[_File, _File]:
    """The certificate and key files the endpoint of ``group`` serves."""
    # A conductor may have its own pair for JSON-RPC, as in Ironic; else
    # the [ssl] pair of the host, shared with the API.
    source = 'ssl'
    if group == 'json_rpc' and (conf.json_rpc.cert_file
                                or conf.json_rpc.key_file):
        source = 'json_rpc'
    files = []
    for name, what in (('cert_file', 'the certificate to serve'),
                       ('key_file', 'its private key')):
        option = '[%s] %s' % (source, name)
        path = conf[source][name]
        if not path:
            raise TLSOptionMissing(switch=_SWITCHES[group], option=option,
                                   what=what)
        files.append(_File(option, path))
    return files[0], files[1]


def _client_authorities(conf: cfg.ConfigOpts, group: str) -> _File | None:
    """The authorities of the client certificates the endpoint of
    ``group`` asks for; None: it asks for none."""
    # JSON-RPC may have its own, so that requiring client certificates
    # there does not require them on an API sharing the config file.
    if group == 'json_rpc' and conf.json_rpc.ca_file:
        return _File('[json_rpc] ca_file', conf.json_rpc.ca_file)
    if conf.ssl.ca_file:
        return _File('[ssl] ca_file', conf.ssl.ca_file)
    return None


def server_enabled(conf: cfg.ConfigOpts, group: str) -> bool:
    """Whether the endpoint of ``group`` (``api``, ``json_rpc``) is HTTPS."""
    return bool(conf.api.enable_ssl_api if group == 'api'
                else conf.json_rpc.use_ssl)


def server_context(conf: cfg.ConfigOpts, group: str) -> ServerTLS | None:
    """The TLS context the endpoint of ``group`` serves with; None: HTTP.

    The files are in the result for servers (cheroot) that read them
    again themselves.

    :param group: ``api`` or ``json_rpc``.
    :raises TLSOptionMissing: TLS is on without a certificate or key.
    :raises TLSFileInvalid: a file is missing, unreadable, not PEM, or
        the key does not match the certificate.
    """
    if not server_enabled(conf, group):
        return None
    cert, key = _server_files(conf, group)
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    _load_pair(context, cert, key)
    authorities = _client_authorities(conf, group)
    if authorities is not None:
        _load_authorities(context, authorities)
        context.verify_mode = ssl.CERT_REQUIRED
    return ServerTLS(context, cert.path, key.path)


#: What ``requests`` takes as ``verify`` and ``cert``.
Verify = bool | str
ClientCert = str | tuple[str, str] | None


def client_settings(conf: cfg.ConfigOpts) -> tuple[Verify, ClientCert]:
    """``verify`` and ``cert`` for the API's calls to conductors.

    From ``[json_rpc] cafile`` (unset: the system's authorities),
    ``certfile`` and ``keyfile``, each checked as :func:`server_context`
    checks the server's.

    :raises TLSOptionMissing: keyfile without certfile.
    :raises TLSFileInvalid: as for :func:`server_context`.
    """
    options = conf.json_rpc
    # A scratch context: requests builds its own from the same files.
    context = ssl.create_default_context()
    verify: Verify = True
    if options.cafile:
        _load_authorities(context, _File('[json_rpc] cafile',
                                         options.cafile))
        verify = options.cafile
    if options.keyfile and not options.certfile:
        raise TLSOptionMissing(switch='[json_rpc] keyfile',
                               option='[json_rpc] certfile',
                               what='the client certificate of that key')
    if not options.certfile:
        return verify, None
    cert = _File('[json_rpc] certfile', options.certfile)
    key = (_File('[json_rpc] keyfile', options.keyfile)
           if options.keyfile else None)
    _load_pair(context, cert, key)
    return verify, ((cert.path, key.path) if key else cert.path)


def _causes(exc: BaseException) -> Iterator[BaseException]:
    """``exc`` and what it wraps, as requests and urllib3 nest them."""
    seen: set[int] = set()
    pending: list[BaseException] = [exc]
    while pending:
        current = pending.pop()
        if id(current) in seen:
            continue
        seen.add(id(current))
        yield current
        inner = [current.__cause__, current.__context__,
                 getattr(current, 'reason', None)]
        inner.extend(current.args)
        pending.extend(item for item in inner
                       if isinstance(item, BaseException))


def client_failure(exc: BaseException) -> str | None:
    """Why a call to a conductor failed in TLS, naming what to fix.

    :returns: None when ``exc`` is no TLS failure.
    """
    for cause in _causes(exc):
        if isinstance(cause, ssl.SSLCertVerificationError):
            return ('its TLS certificate is not trusted (%s): set '
                    '[json_rpc] cafile on the API to the certificate '
                    'authority that signed it, and make sure the '
                    'certificate names the host of the address the '
                    'conductor registered' % (cause.verify_message
                                              or cause.reason))
        if isinstance(cause, _LOST):
            # Also how a server refusing a missing client certificate may
            # look (it closes before its alert arrives): say both, and
            # not that the certificate authority is wrong.
            return ('the connection closed during the TLS handshake (%s): '
                    'the conductor stopped or dropped it, or its [json_rpc] '
                    'ca_file (or [ssl] ca_file) requires a client '
                    'certificate: then set '
                    'certfile and keyfile in [json_rpc] here' % cause)
        if isinstance(cause, ssl.SSLError) and _refused_handshake(cause):
            return ('the TLS handshake failed (%s): check [json_rpc] '
                    'cafile, and certfile and keyfile if the conductor\'s '
                    '[json_rpc] ca_file (or [ssl] ca_file) requires a '
                    'client certificate'
                    % (cause.reason or cause))
    return None


#: OpenSSL reasons, besides an alert from the peer (``*_ALERT_*``), that
#: mean the two sides' TLS settings do not fit: the fix is a setting.
_MISFIT_REASONS = frozenset({
    'CERTIFICATE_REQUIRED', 'PEER_DID_NOT_RETURN_A_CERTIFICATE',
    'WRONG_VERSION_NUMBER', 'UNSUPPORTED_PROTOCOL', 'UNKNOWN_PROTOCOL',
    'NO_PROTOCOLS_AVAILABLE', 'NO_SHARED_CIPHER', 'NO_CIPHERS_AVAILABLE',
    'TLSV1_ALERT_PROTOCOL_VERSION', 'HTTP_REQUEST', 'HTTPS_PROXY_REQUEST',
})


#: An end of file, a zero return or a system call error (a reset, a
#: conductor killed mid-handshake) says nothing about the certificates.
_LOST = (ssl.SSLEOFError, ssl.SSLZeroReturnError, ssl.SSLSyscallError)


def _refused_handshake(error: ssl.SSLError) -> bool:
    """Whether the handshake failed on the settings: an alert from the
    peer or a reason in :data:`_MISFIT_REASONS`; any other SSL error is
    reported as the conductor being unreachable."""
    reason = error.reason or ''
    return '_ALERT_' in reason or reason in _MISFIT_REASONS
