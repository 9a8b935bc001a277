# SPDX-License-Identifier: Apache-2.0
"""Serves a WSGI application with cheroot on a background thread.

``ferrum`` and ``ferrum-api`` use it for the API, ``ferrum-conductor``
for its JSON-RPC endpoint; any other WSGI server can run
``ferrum.api.wsgi:application`` instead. The address comes from
``[api] host_ip`` and ``port``: with ``auth_strategy = noauth`` a
non-loopback address is refused unless ``[api] allow_non_loopback_noauth``
says otherwise, since the API would then let anyone on the network drive
every node.
"""

import ipaddress
import logging
import socket
import threading
from typing import Any

from cheroot import wsgi
from oslo_config import cfg

from ferrum.common import exception

LOG = logging.getLogger(__name__)

#: Connections the kernel queues while every thread is busy; cheroot's own
#: default of 5 resets clients of even a small benchmark.
LISTEN_BACKLOG = 128


class NoauthNotLoopback(exception.FerrumException):
    msg_fmt = ('Refusing to serve the API on %(host)s without '
               'authentication: anyone who can reach that address could '
               'drive every node. Set [DEFAULT] auth_strategy = http_basic, '
               'or [api] host_ip to a loopback address such as 127.0.0.1, '
               'or [api] allow_non_loopback_noauth = True if a proxy in '
               'front authenticates.')


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


def check_bind_allowed(conf: cfg.ConfigOpts) -> None:
    """Refuse a non-loopback address without authentication.

    :raises NoauthNotLoopback: see the module docstring.
    """
    host = conf.api.host_ip
    if conf.auth_strategy != 'noauth' or is_loopback(host):
        return
    if not conf.api.allow_non_loopback_noauth:
        raise NoauthNotLoopback(host=host)
    LOG.warning('Serving the API on %s without authentication, as [api] '
                'allow_non_loopback_noauth allows', host)


class _CherootServer(wsgi.Server):
    """cheroot's server, logging through ferrum's logging, not to stderr."""

    def error_log(self, msg: str = '', level: int = logging.INFO,
                  traceback: bool = False) -> None:
        LOG.log(level, 'cheroot: %s', msg, exc_info=traceback)


class APIServer:
    """An HTTP server for one WSGI application, on a background thread."""

    def __init__(self, conf: cfg.ConfigOpts, group: str = 'api',
                 what: str = 'API') -> None:
        """Check the configured address; nothing is bound yet.

        :param group: the option group of ``host_ip``, ``port`` and
            ``threads``: ``api``, or ``json_rpc`` for a conductor's
            JSON-RPC endpoint (which has no authentication to check).
        :param what: what is served, for logs and errors.
        :raises NoauthNotLoopback: see :func:`check_bind_allowed`.
        """
        if group == 'api':
            check_bind_allowed(conf)
        options = conf[group]
        self._group = group
        self._what = what
        self._host: str = options.host_ip
        self._requested_port: int = options.port
        self._threads: int = options.threads
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
        return 'http://%s:%d' % (host, self.port)

    def start(self, app: Any) -> None:
        """Bind, then serve ``app`` on a background thread.

        :raises BindFailed: the address cannot be bound (in use, not local,
            not permitted).
        """
        server = _CherootServer(
            (self._host, self._requested_port), app,
            numthreads=self._threads, max=self._threads,
            server_name='ferrum', request_queue_size=LISTEN_BACKLOG)
        try:
            server.prepare()
        except OSError as exc:
            # cheroot's message lists every address it tried and why.
            raise BindFailed(what=self._what, group=self._group,
                             host=self._host, port=self._requested_port,
                             reason=str(exc))
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
