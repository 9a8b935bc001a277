# SPDX-License-Identifier: Apache-2.0
"""Serves a WSGI application with cheroot on a background thread.

``ferrum`` and ``ferrum-api`` use it for the API, ``ferrum-conductor``
for its JSON-RPC endpoint; any other WSGI server can run
``ferrum.api.wsgi:application`` instead. The address comes from
``[api] host_ip`` and ``port`` (``[json_rpc]`` for the endpoint): with
``auth_strategy = noauth`` a non-loopback address is refused unless that
group's ``allow_non_loopback_noauth`` says otherwise, since anyone on the
network could then drive every node. With ``[api] enable_ssl_api`` (or
``[json_rpc] use_ssl``) it serves HTTPS only, on the context
:mod:`ferrum.common.tls` builds from checked files.
"""

import ipaddress
import json
import logging
import socket
import threading
from typing import Any

from cheroot import server
from cheroot import wsgi
from cheroot.ssl import builtin as cheroot_ssl
from oslo_config import cfg

from ferrum.common import exception
from ferrum.common import tls

LOG = logging.getLogger(__name__)

#: Connections the kernel queues while every thread is busy; cheroot's own
#: default of 5 resets clients of even a small benchmark.
LISTEN_BACKLOG = 128


class NoauthNotLoopback(exception.FerrumException):
    msg_fmt = ('Refusing to serve the %(what)s on %(host)s without '
               'authentication: anyone who can reach that address could '
               'drive every node. Set %(strategy)s = http_basic, or '
               '[%(group)s] host_ip to a loopback address such as '
               '127.0.0.1, or [%(group)s] allow_non_loopback_noauth = True '
               'if %(trust)s.')


class BindFailed(exception.FerrumException):
    msg_fmt = ('Cannot serve the %(what)s on %(host)s port %(port)d: '
               '%(reason)s. Change [%(group)s] host_ip or port, or stop what '
               'already listens there.')


def is_loopback(host: str) -> bool:
    """Whether every address ``host`` names is a loopback address."""
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        pass
    try:
        infos = socket.getaddrinfo(host, None, proto=socket.IPPROTO_TCP)
    except socket.gaierror:
        return False
    return bool(infos) and all(
        ipaddress.ip_address(str(info[4][0]).split('%')[0]).is_loopback
        for info in infos)


#: group -> (the auth_strategy option, why allowing noauth may be fine).
_AUTH_OPTIONS = {
    'api': ('[DEFAULT] auth_strategy', 'a proxy in front authenticates'),
    'json_rpc': ('[json_rpc] auth_strategy',
                 'only the API hosts can reach that network'),
}


def check_bind_allowed(conf: cfg.ConfigOpts, group: str = 'api',
                       what: str = 'API') -> None:
    """Refuse a non-loopback address without authentication.

    :param group: ``api`` (whose strategy is ``[DEFAULT] auth_strategy``)
        or ``json_rpc``; each has its own ``allow_non_loopback_noauth``.
    :raises NoauthNotLoopback: see the module docstring.
    """
    options = conf[group]
    host = options.host_ip
    strategy = (conf.auth_strategy if group == 'api'
                else options.auth_strategy)
    if strategy != 'noauth' or is_loopback(host):
        return
    if not options.allow_non_loopback_noauth:
        option, trust = _AUTH_OPTIONS[group]
        raise NoauthNotLoopback(what=what, host=host, strategy=option,
                                group=group, trust=trust)
    LOG.warning('Serving the %s on %s without authentication, as [%s] '
                'allow_non_loopback_noauth allows', what, host, group)


class _Request(server.HTTPRequest):
    """cheroot's request, with its own error answers made safe.

    cheroot answers what it cannot parse (a request line such as ``GET
    //v1/nodes``, which it takes for an absolute URI; a bad header) itself,
    in plain text, and then drops the connection without saying so, so a
    client's next request on that kept-alive connection fails. These
    answers say ``Connection: close`` and use Ironic's error body.
    """

    def simple_response(self, status: Any, msg: Any = '') -> None:
        status = str(status)
        if not status.startswith(('4', '5')):
            super().simple_response(status, msg)
            return
        self.close_connection = True
        text = msg.decode('latin-1') if isinstance(msg, bytes) else msg
        fault = {'faultstring': text or status, 'debuginfo': None,
                 'faultcode': 'Client' if status < '5' else 'Server'}
        body = json.dumps({'error_message': json.dumps(fault)}).encode()
        head = ('%s %s\r\nContent-Length: %d\r\nContent-Type: '
                'application/json\r\nConnection: close\r\n\r\n'
                % (self.server.protocol, status, len(body)))
        try:
            self.conn.wfile.write(head.encode('latin-1') + body)
        except OSError:
            pass  # the client is gone; the connection is closed anyway


class _Connection(server.HTTPConnection):
    RequestHandlerClass = _Request


#: The request line and headers together, in bytes (cheroot's default is
#: no limit): past it cheroot answers 413 or 414 and closes. Ironic leaves
#: this to its WSGI server; a query that long is refused by the API's own
#: bounds anyway.
MAX_REQUEST_HEADER_SIZE = 64 * 1024


class _CherootServer(wsgi.Server):
    """cheroot's server, logging through ferrum's logging, not to stderr."""

    ConnectionClass = _Connection
    max_request_header_size = MAX_REQUEST_HEADER_SIZE

    def error_log(self, msg: str = '', level: int = logging.INFO,
                  traceback: bool = False) -> None:
        LOG.log(level, 'cheroot: %s', msg, exc_info=traceback)


class APIServer:
    """An HTTP server for one WSGI application, on a background thread."""

    def __init__(self, conf: cfg.ConfigOpts, group: str = 'api',
                 what: str = 'API') -> None:
        """Check the configured address and TLS files; nothing is bound
        yet.

        The TLS files are read here, not in :meth:`start`: programs build
        their server before starting a conductor, so a wrong file stops
        them before the conductor registers, clears locks and runs
        periodics (systemd would repeat all that at every restart).

        :param group: the option group of ``host_ip``, ``port``,
            ``threads`` and ``allow_non_loopback_noauth``: ``api``, or
            ``json_rpc`` for a conductor's JSON-RPC endpoint.
        :param what: what is served, for logs and errors.
        :raises NoauthNotLoopback: see :func:`check_bind_allowed`.
        :raises TLSOptionMissing, TLSFileInvalid: see
            :func:`ferrum.common.tls.server_context`.
        """
        check_bind_allowed(conf, group, what)
        options = conf[group]
        self._group = group
        self._what = what
        self._host: str = options.host_ip
        self._requested_port: int = options.port
        self._threads: int = options.threads
        self._served = tls.server_context(conf, group)
        self._server: _CherootServer | None = None
        self._thread: threading.Thread | None = None

    @property
    def port(self) -> int:
        """The port bound, once started (the kernel's pick for port 0)."""
        if self._server is None:
            return self._requested_port
        return int(self._server.bind_addr[1])

    @property
    def url(self) -> str:
        """The base URL of the server, once started."""
        host = self._host
        if ':' in host:
            host = '[%s]' % host
        scheme = 'https' if self._served is not None else 'http'
        return '%s://%s:%d' % (scheme, host, self.port)

    def start(self, app: Any) -> None:
        """Bind, then serve ``app`` on a background thread.

        :raises BindFailed: the address cannot be bound (in use, not local,
            not permitted).
        """
        served = self._served
        server = _CherootServer(
            (self._host, self._requested_port), app,
            numthreads=self._threads, max=self._threads,
            server_name='ferrum', request_queue_size=LISTEN_BACKLOG)
        if served is not None:
            adapter = cheroot_ssl.BuiltinSSLAdapter(served.cert_file,
                                                    served.key_file)
            # The context whose files were checked, with its settings
            # (client certificates); cheroot's own only has the pair.
            adapter.context = served.context
            server.ssl_adapter = adapter
        try:
            server.prepare()
        except OSError as exc:
            # cheroot's message lists every address it tried and why.
            raise BindFailed(what=self._what, group=self._group,
                             host=self._host, port=self._requested_port,
                             reason=str(exc)) from exc
        self._server = server
        self._thread = threading.Thread(target=server.serve,
                                        name='ferrum-api', daemon=True)
        self._thread.start()
        LOG.info('Serving the %s on %s with %d threads', self._what,
                 self.url, self._threads)

    def stop(self) -> None:
        """Stop accepting, finish running requests, stop. Safe to repeat."""
        if self._server is None or self._thread is None:
            return
        self._server.stop()
        self._thread.join()
        self._thread = None
        LOG.info('Stopped serving the %s on %s', self._what, self.url)
